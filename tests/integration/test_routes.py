"""The Route interface: injected routes and routers go through the same fusion and packing."""

from __future__ import annotations

from greprag import Retriever
from greprag.models import Candidate, Query, QueryPlan
from greprag.routes import Route, RouteRequest
from greprag.routes.grep import GrepRoute
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
    check_invariants(py_repo, res, where.file, 4096)
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
    assert res.blocks and all(b.path == "config/settings.py" for b in res.blocks)


def test_a_static_route_answer_can_depend_on_the_request(py_repo):
    seen: list[RouteRequest] = []

    def answer(request: RouteRequest) -> list[Candidate]:
        seen.append(request)
        return []

    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    Retriever(py_repo, routes=[StaticRoute(answer)]).retrieve(**where.kwargs())
    assert seen and seen[0].exclude_path == where.file and seen[0].cursor_line == where.line
    assert seen[0].imported.get("DataLoader") == "data/loader.py"
