"""The Route interface: injected routes and routers go through the same fusion and packing."""

from __future__ import annotations

from greprag import Retriever
from greprag.cursor_file import CursorFile, cursor_file
from greprag.files import FileCache
from greprag.models import Candidate, Query, QueryPlan
from greprag.routes import Route, RouteRequest
from greprag.routes.grep import GrepRoute
from greprag.routes.similar import NEXT_DOOR_PRIOR, SimilarRoute
from greprag.routes.static import StaticRoute
from tests.conftest import check_invariants, cursor, line_of


def test_every_route_implements_the_protocol(py_repo):
    assert isinstance(GrepRoute(py_repo), Route)
    assert isinstance(StaticRoute([]), Route)


def test_a_static_route_is_scored_widened_and_packed_like_grep(py_repo):
    head = line_of(py_repo, "data/loader.py", r"def load_batch")
    hit = Candidate("data/loader.py", head, head, "def load_batch", prior=1.0, match_lines=(head,))
    outside = Candidate("../secret.py", 1, 2, "x", prior=1.0)
    retriever = Retriever(py_repo, routes=[StaticRoute([hit, outside])])
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    res = retriever.retrieve(**where.kwargs())
    check_invariants(py_repo, res, where.file, 4096, where.line)
    assert [b.path for b in res.blocks] == ["data/loader.py"]
    block = res.blocks[0]
    assert block.start_line == head < block.end_line, "widened to the whole method"
    assert block.route == "static"


def test_a_static_route_never_returns_the_current_file(py_repo):
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    own = Candidate(where.file, 1, 3, "x", prior=1.0)
    res = Retriever(py_repo, routes=[StaticRoute([own])]).retrieve(**where.kwargs())
    assert res.blocks == []


class _OneQueryRouter:
    """A router object: plans one definition probe whatever the cursor."""

    name = "fixed"

    def plan(self, ctx, imported=None) -> QueryPlan:
        query = Query(r"^\s*class\s+Config\b", "class", False, "python", "Config", "definition")
        return QueryPlan(queries=[query], router=self.name)


def test_an_injected_router_plans_for_the_real_grep_route(py_repo):
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    res = Retriever(py_repo, router=_OneQueryRouter()).retrieve(**where.kwargs())
    assert res.router == "fixed" and [q.identifier for q in res.queries] == ["Config"]
    probed = [b for b in res.blocks if b.route != "similar"]  # the similar route runs too
    assert probed and all(b.path == "config/settings.py" for b in probed)


def test_a_static_route_answer_can_depend_on_the_request(py_repo):
    seen: list[RouteRequest] = []

    def answer(request: RouteRequest) -> list[Candidate]:
        seen.append(request)
        return []

    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    Retriever(py_repo, routes=[StaticRoute(answer)]).retrieve(**where.kwargs())
    assert seen and seen[0].current.path == where.file and seen[0].cursor_line == where.line
    assert seen[0].imported.get("DataLoader") == "data/loader.py"


def _similar_request(repo, where) -> tuple[RouteRequest, SimilarRoute]:
    retriever = Retriever(repo)
    ctx = retriever.local_context(where.file, where.line, where.column)
    request = RouteRequest(
        QueryPlan(queries=[]), ctx, FileCache(retriever.repo), CursorFile(ctx.path), ctx.line
    )
    return request, SimilarRoute(GrepRoute(retriever.repo))


def test_the_similar_route_finds_the_sibling_of_an_empty_body(py_repo):
    where = cursor(py_repo, "transforms/normalize.py", "raise NotImplementedError", "        ")
    request, route = _similar_request(py_repo, where)
    assert request.ctx.empty_body
    hits = route.search(request)
    assert hits.route == "similar" and "similar" in hits.timings
    assert hits.candidates and all(c.path != where.file for c in hits.candidates)
    # the base class's method and the sibling subclass's come first
    top = {c.path: c for c in hits.candidates[:2]}
    assert set(top) == {"transforms/base.py", "transforms/scale.py"}
    sibling = line_of(py_repo, "transforms/scale.py", r"def transform")
    assert top["transforms/scale.py"].start_line <= sibling <= top["transforms/scale.py"].end_line
    assert all(c.route == "similar" and 0 < c.prior <= 1.0 for c in hits.candidates)
    assert [c.prior for c in hits.candidates] == sorted(
        (c.prior for c in hits.candidates), reverse=True
    )


def test_the_sibling_is_packed_whole_from_the_similar_route(py_repo):
    where = cursor(py_repo, "transforms/normalize.py", "raise NotImplementedError", "        ")
    res = Retriever(py_repo).retrieve(**where.kwargs())
    check_invariants(py_repo, res, where.file, 4096, where.line)
    sibling = [b for b in res.blocks if b.path == "transforms/scale.py"]
    assert sibling and "similar" in sibling[0].route.split("+")
    assert "scaled[column] = row[column] * self.factor" in sibling[0].text
    off = Retriever(py_repo, similar=False).retrieve(**where.kwargs())
    assert all("similar" not in b.route for b in off.blocks)


def test_the_similar_route_admits_only_the_current_files_lines_it_is_told(java_repo):
    worker = "src/main/java/com/shop/workers/CleanupWorker.java"
    where = cursor(java_repo, worker, 'config.get("cleanup")', "        ")
    request, route = _similar_request(java_repo, where)
    found = {c.path for c in route.search(request).candidates}
    assert worker not in found
    assert {p.rsplit("/", 1)[-1] for p in found} >= {"MetricsWorker.java", "ReportWorker.java"}
    request.current = CursorFile(worker, ((1, where.line - 1),))
    above = [c for c in route.search(request).candidates if c.path == worker]
    assert above and all(c.end_line < where.line for c in above)


def test_a_failing_rg_costs_the_similar_route_its_answer_not_the_retrieval(py_repo, tmp_path):
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\necho 'rg: broken' >&2\nexit 2\n")
    fake.chmod(0o755)
    where = cursor(py_repo, "transforms/normalize.py", "raise NotImplementedError", "        ")
    request, _ = _similar_request(py_repo, where)
    hits = SimilarRoute(GrepRoute(py_repo, rg_path=str(fake))).search(request)
    assert hits.candidates == [] and hits.notes == ["similar: rg failed (2): broken"]


def test_the_similar_route_offers_the_code_just_below_the_function_being_written(py_repo):
    stats = "metrics/stats.py"
    where = cursor(py_repo, stats, "self.seen += len(values)", "        ")
    request, route = _similar_request(py_repo, where)
    request.current = cursor_file(request.ctx, request.files.get, "below")
    own = [c for c in route.search(request).candidates if c.path == stats]
    spread = line_of(py_repo, stats, r"def compute_spread")
    next_door = [c for c in own if not c.match_lines]  # not a region of sought words
    assert [(c.start_line, c.route, c.prior) for c in next_door] == [
        (spread, "similar", NEXT_DOOR_PRIOR)
    ], own
    assert next_door[0].end_line == len(request.files.get(stats))
    assert "def percentile" in next_door[0].text
    for mode in ("no", "above"):  # nothing below the cursor is admitted: nothing offered
        request.current = cursor_file(request.ctx, request.files.get, mode)
        own = [c for c in route.search(request).candidates if c.path == stats]
        assert all(c.end_line < where.line for c in own)
