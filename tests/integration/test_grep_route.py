"""The grep route with real rg: cached file lists, the second hop."""

from __future__ import annotations

import pytest


def test_an_oversize_file_stays_skipped_once_the_file_list_is_cached(tmp_path):
    from greprag import Retriever

    (tmp_path / "big.py").write_text("def DataLoaderX():\n    pass\n" + "x = 1\n" * 300_000)
    (tmp_path / "small.py").write_text("from big import DataLoaderX\n\nvalue = DataLoaderX()\n")
    (tmp_path / "user.py").write_text("def g():\n    DataLoaderX()\n")
    retriever = Retriever(tmp_path, routes="grep")
    for _ in range(2):  # the second search passes rg the cached file list
        res = retriever.retrieve(file="user.py", line=2)
        assert [s.path for s in res.skipped] == ["big.py"]
        assert "too large" in res.skipped[0].reason
        assert {b.path for b in res.blocks} == {"small.py"}


def _oversize_repo(tmp_path):
    (tmp_path / "big.py").write_text("def DataLoaderX():\n    pass\n" + "x = 1\n" * 300_000)
    (tmp_path / "user.py").write_text("def g():\n    DataLoaderX()\n")
    return tmp_path


def test_the_oversize_probe_runs_beside_the_search_once_the_file_list_is_cached(tmp_path):
    """rg -l over the oversize files starts with the search, before any of its output is
    read, so it adds no rg run after it."""
    from greprag import Retriever
    from greprag.routes import grep

    retriever = Retriever(_oversize_repo(tmp_path), routes="grep")
    retriever.retrieve(file="user.py", line=2)  # lists the files
    events: list[str] = []
    popen, finish = grep.GrepRoute._popen, grep.GrepRoute._finish

    def spy_popen(self, argv, stderr=None, **kwargs):
        events.append("probe" if "-l" in argv else "search")
        return popen(self, argv, **({} if stderr is None else {"stderr": stderr}))

    def spy_finish(self, *args, **kwargs):
        events.append("read")
        return finish(self, *args, **kwargs)

    grep.GrepRoute._popen, grep.GrepRoute._finish = spy_popen, spy_finish
    try:
        res = retriever.retrieve(file="user.py", line=2)
    finally:
        grep.GrepRoute._popen, grep.GrepRoute._finish = popen, finish
    assert events[: events.index("read")].count("probe") == 1
    assert events.count("probe") == 1
    assert [s.path for s in res.skipped] == ["big.py"]


def test_a_pattern_rg_rejects_does_not_hide_an_oversize_match(tmp_path):
    """The probe started beside the search ran a pattern rg refused, so it answered
    nothing: it is run again with the patterns rg kept."""
    from greprag import Retriever
    from tests.reliability.conftest import Proposed

    router = Proposed(r"\bDataLoaderX\b", r"DataLoaderX\Z")  # rg rejects ``\Z``
    retriever = Retriever(_oversize_repo(tmp_path), routes="grep", router=router)
    for _ in range(2):  # cold (the search walks), then with the cached file list
        res = retriever.retrieve(file="user.py", line=2)
        assert [s.path for s in res.skipped] == ["big.py"]
        assert "too large" in res.skipped[0].reason
        assert any("rejected by rg" in note for note in res.fallbacks)


def test_second_hop_types_a_receiver_from_its_assignment_elsewhere(tmp_path):
    from greprag import Retriever

    (tmp_path / "storage.py").write_text(
        "class BlobStore:\n    def put_blob(self, key, data):\n        return key\n"
    )
    (tmp_path / "base.py").write_text(
        "from storage import BlobStore\n\nclass Base:\n    def __init__(self):\n"
        "        self.store = BlobStore()\n"
    )
    (tmp_path / "job.py").write_text(
        "from base import Base\n\nclass Job(Base):\n    def run(self, key):\n        self.store.\n"
    )
    res = Retriever(tmp_path, routes="grep").retrieve(file="job.py", line=5, column=19)
    assert any(q.purpose == "second hop" and q.identifier == "BlobStore" for q in res.queries)
    assert any(b.path == "storage.py" and "def put_blob" in b.text for b in res.blocks)


def test_once_the_second_hop_types_the_receiver_its_bindings_rank_below_the_type(tmp_path):
    """``store = ...`` in many files told the second hop the type; past that they only
    crowd the budget, so the type's definition outranks them."""
    from greprag import Retriever

    (tmp_path / "storage.py").write_text(
        "class BlobBucket:\n    def put_blob(self, key, data):\n        return key\n"
    )
    for i in range(12):
        (tmp_path / f"app{i}.py").write_text(
            f"from storage import BlobBucket\n\n\nclass Worker{i}:\n    def __init__(self):\n"
            f"        self.store = BlobBucket()\n        self.key = {i}\n"
        )
    (tmp_path / "job.py").write_text("class Job:\n    def run(self, key):\n        self.store.\n")
    res = Retriever(tmp_path, routes="grep").retrieve(file="job.py", line=3, column=19)
    assert any(q.purpose == "second hop" and q.identifier == "BlobBucket" for q in res.queries)
    ranked = [b.path for b in sorted(res.blocks, key=lambda b: -b.score)]
    assert ranked[0] == "storage.py", ranked


def _found(repo, queries, line: int, column: int) -> list[tuple[str, int]]:
    """(path, query number) of each candidate of ``queries`` run by the grep route with a
    cap of ten lines per file, the cursor at ``user.py:line:column``."""
    from greprag import Retriever
    from greprag.cursor_file import CursorFile
    from greprag.files import FileCache
    from greprag.models import QueryPlan
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute

    ctx = Retriever(repo, routes="grep").local_context("user.py", line, column)
    route = GrepRoute(repo, max_count_per_file=10)
    request = RouteRequest(
        QueryPlan(queries=queries), ctx, FileCache(repo), CursorFile("user.py"), line
    )
    return [(c.path, c.query_index) for c in route.search(request).candidates]


def test_a_probe_limited_to_one_file_crowds_no_hits_out_of_the_others(tmp_path):
    """A probe of every definition in one module runs over that module alone: in one rg
    process with the rest, its matches used up rg's per-file line cap everywhere."""
    from greprag.models import Query

    defs = "".join(f"def helper_{i}():\n    pass\n" for i in range(12))
    (tmp_path / "mod.py").write_text(defs)
    (tmp_path / "big.py").write_text(defs + "def target():\n    pass\n")
    (tmp_path / "user.py").write_text("import mod\n\ntarget()\n")
    any_def = r"^\s*(class|(async\s+)?def)\s+([A-Za-z_]\w*)\b"
    found = _found(
        tmp_path,
        [
            Query(any_def, "method", False, "python", "", "import", 0.3, 4, ("mod.py",)),
            Query(r"^\s*def\s+target\b", "method", False, "python", "target", "definition"),
        ],
        3,
        1,
    )
    assert ("big.py", 1) in found  # past big.py's first ten definitions
    assert {path for path, index in found if index == 0} == {"mod.py"}
    assert sum(1 for _, index in found if index == 0) == 10  # its own cap


def test_probes_limited_to_different_files_do_not_share_a_files_cap(tmp_path):
    """The every-name probe of one module and a probe of one name in another run apart:
    together, the first would use up rg's per-file line cap in the other's file before
    its class (pytest's ``class Config:`` past 30 top-level names)."""
    from greprag.models import Query

    names = "".join(f"NAME_{i} = {i}\n" for i in range(12))
    (tmp_path / "small.py").write_text(names)
    (tmp_path / "config.py").write_text(names + "\n\nclass Config:\n    pass\n")
    (tmp_path / "user.py").write_text("import small\nfrom config import Config\n\nsmall.\n")
    any_name = r"^(class|(async\s+)?def)\s+([A-Za-z_]\w*)\b|^([A-Za-z_]\w*)\s*="
    config = r"^\s*class\s+Config\b"
    found = _found(
        tmp_path,
        [
            Query(any_name, "method", False, "python", "*", "import", 0.7, 4, ("small.py",)),
            Query(config, "class", False, "python", "Config", "import", 0.45, 4, ("config.py",)),
        ],
        4,
        6,
    )
    assert ("config.py", 1) in found, found
    assert {path for path, index in found if index == 0} == {"small.py"}


def test_usage_stands_in_for_a_class_the_repository_does_not_define(tmp_path):
    """``mView.`` with ``View`` an SDK class: its definition probe finds nothing, so how
    ``mView`` is used elsewhere takes that probe's weight. A class the cursor's own file
    defines is no such class, though its lines above the cursor are not searched."""
    from greprag import Retriever
    from greprag.cursor_file import CursorFile
    from greprag.files import FileCache
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute

    field = "    private View mView;\n    void show() {\n        mView.\n    }\n}\n"
    usage = "class Other {\n    void hide() {\n        mView.setFocusable(false);\n    }\n}\n"

    def usage_priors(top: str) -> tuple[float, list[float]]:
        repo = tmp_path / str(len(top))
        repo.mkdir()
        (repo / "Other.java").write_text(usage)
        (repo / "Widget.java").write_text(top + "class Widget {\n" + field)
        line = top.count("\n") + 4
        retriever = Retriever(repo, routes="grep")
        ctx = retriever.local_context("Widget.java", line, 14)
        plan = retriever.plan("Widget.java", line, 14)
        request = RouteRequest(plan, ctx, FileCache(repo), CursorFile("Widget.java"), line)
        hits = GrepRoute(repo).search(request)
        view = next(q for q in plan.queries if q.identifier == "View" and q.kind == "class")
        assert view.purpose == "definition"
        other = [c.prior for c in hits.candidates if c.path == "Other.java"]
        return view.weight, other

    weight, priors = usage_priors("")
    assert priors and max(priors) == weight  # no class View anywhere: usage stands in
    weight, priors = usage_priors("class View {\n}\n")
    assert priors and max(priors) < weight  # the cursor's file defines it


def test_the_grep_and_similar_passes_share_the_cores_once_the_repo_is_listed(py_repo, monkeypatch):
    """Cold, the grep route's pass runs alone and takes rg's default threads; once the
    repository is listed the similar route's pass runs beside it, and each gets half the
    cores. The answer is the same either way."""
    import greprag.rg
    import greprag.routes.grep
    from greprag import Retriever
    from greprag.rg import shared_threads
    from tests.conftest import cursor

    runs: list[list[str]] = []
    real_spawn = greprag.rg.spawn

    def recording_spawn(argv, *args, **kwargs):
        runs.append([str(a) for a in argv])
        return real_spawn(argv, *args, **kwargs)

    monkeypatch.setattr(greprag.rg, "spawn", recording_spawn)
    monkeypatch.setattr(greprag.routes.grep, "spawn", recording_spawn)
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    retriever = Retriever(py_repo, similar_process=False)  # every rg run in this process

    def searches() -> list[list[str]]:
        return [a for a in runs if "--files" not in a]

    cold = retriever.retrieve(**where.kwargs())
    assert searches() and all("--threads" not in a for a in searches())
    runs.clear()
    warm = retriever.retrieve(**where.kwargs())
    words = [a for a in searches() if "--word-regexp" in a]
    assert words and len(searches()) > len(words), "the words pass ran beside the grep pass"
    half = str(shared_threads(2))
    for argv in searches():
        assert argv[argv.index("--threads") + 1] == half
    assert warm.context == cold.context


@pytest.mark.parametrize("in_worker", [False, True])
def test_the_similar_pass_starts_before_the_plan_is_made(py_repo, monkeypatch, in_worker):
    """Similar code needs no plan: once the repository is listed, its rg pass runs while
    the router plans (a model's answer takes seconds), not after it: in the route's
    thread, or sent to the worker process."""
    import threading

    from greprag import Retriever
    from greprag.config import Settings
    from greprag.router import OfflineRouter
    from greprag.routes import similar_worker
    from tests.conftest import cursor

    started = threading.Event()
    real_run_words = similar_worker.run_words
    worker = similar_worker.WordsWorker()
    monkeypatch.setattr(similar_worker, "_shared", worker)
    assert not in_worker or worker.ready(timeout=30)
    real_submit = worker.submit

    def recording_run_words(*args, **kwargs):
        started.set()
        return real_run_words(*args, **kwargs)

    def recording_submit(*args, **kwargs):
        sent = real_submit(*args, **kwargs)
        if sent is not None:
            started.set()
        return sent

    monkeypatch.setattr(similar_worker, "run_words", recording_run_words)
    monkeypatch.setattr(worker, "submit", recording_submit)
    offline = OfflineRouter.from_settings(Settings())
    watching = threading.Event()  # set: the plan waits for the words pass to start
    waits: list[bool] = []

    class WaitingRouter:
        """The offline plan, made once the words pass has started (at most 10 s later)."""

        name = "waiting"

        def plan(self, ctx, imported=None):
            if watching.is_set():
                waits.append(started.wait(timeout=10))
            return offline.plan(ctx, imported)

    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    retriever = Retriever(py_repo, router=WaitingRouter(), similar_process=in_worker)
    retriever.retrieve(**where.kwargs())  # cold: lists the repository
    started.clear()
    watching.set()
    retriever.retrieve(**where.kwargs())
    assert waits == [True], "the words pass started only after the plan"
    assert worker._jobs == (1 if in_worker else 0)
    worker.close()


def test_a_file_listing_past_the_timeout_leaves_the_search_as_it_was(py_repo, monkeypatch):
    """The file list made beside a cold search only spares the next search its walk: when
    listing takes too long, it is given up and the search's answer stands."""
    import sys

    import greprag.routes.grep
    from greprag import Retriever
    from tests.conftest import cursor

    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    expected = Retriever(py_repo, routes="grep").retrieve(**where.kwargs())
    stalled = [sys.executable, "-c", "import time; time.sleep(60)"]
    monkeypatch.setattr(greprag.routes.grep, "files_argv", lambda *args: stalled)
    retriever = Retriever(py_repo, routes="grep")
    retriever.grep.timeout = 2.0
    res = retriever.retrieve(**where.kwargs())
    assert res.context == expected.context


def test_a_listing_past_the_timeout_costs_the_similar_route_its_answer_only(py_repo, monkeypatch):
    """Cold, the similar route lists the repository before its pass; when listing takes
    too long, the retrieval goes on without similar code and says why."""
    import sys

    import greprag.rg
    import greprag.routes.grep
    from greprag import Retriever
    from tests.conftest import cursor

    where = cursor(py_repo, "transforms/normalize.py", "raise NotImplementedError", "        ")
    stalled = [sys.executable, "-c", "import time; time.sleep(60)"]
    monkeypatch.setattr(greprag.rg, "files_argv", lambda *args: stalled)
    monkeypatch.setattr(greprag.routes.grep, "files_argv", lambda *args: stalled)
    retriever = Retriever(py_repo)
    retriever.grep.timeout = 1.0
    res = retriever.retrieve(**where.kwargs())
    assert res.blocks and all("similar" not in b.route.split("+") for b in res.blocks)
    assert "similar: rg --files took longer than 1 s" in res.fallbacks


def test_a_java_listing_past_the_timeout_resolves_imports_without_it(java_repo, monkeypatch):
    """A Java cursor's imports are looked up in the file list, made at once when cold;
    when listing takes too long, they are resolved by path and the retrieval goes on."""
    import sys

    import greprag.rg
    import greprag.routes.grep
    from greprag import Retriever
    from tests.conftest import cursor

    worker = "src/main/java/com/shop/workers/CleanupWorker.java"
    where = cursor(java_repo, worker, 'config.get("cleanup")', "        ")
    expected = Retriever(java_repo).local_context(where.file, where.line, where.column)
    imported = Retriever(java_repo)._imports(expected)
    assert imported, "the fixture's worker imports classes of the repository"
    stalled = [sys.executable, "-c", "import time; time.sleep(60)"]
    monkeypatch.setattr(greprag.rg, "files_argv", lambda *args: stalled)
    monkeypatch.setattr(greprag.routes.grep, "files_argv", lambda *args: stalled)
    retriever = Retriever(java_repo)
    retriever.grep.timeout = 1.0
    assert retriever._imports(expected) == imported
    assert retriever.retrieve(**where.kwargs()).blocks


def test_an_oversize_probe_past_the_timeout_leaves_the_search_as_it_was(tmp_path, monkeypatch):
    """The rg -l over oversize files only adds skips: when it takes too long, it is given
    up and the search's answer stands."""
    import sys

    from greprag import Retriever
    from greprag.routes import grep

    repo = _oversize_repo(tmp_path)
    expected = Retriever(repo, routes="grep").retrieve(file="user.py", line=2)
    popen = grep.GrepRoute._popen
    stalled = [sys.executable, "-c", "import time; time.sleep(60)"]

    def stalling_probe(self, argv, **kwargs):
        return popen(self, stalled if "-l" in argv else argv, **kwargs)

    monkeypatch.setattr(grep.GrepRoute, "_popen", stalling_probe)
    retriever = Retriever(repo, routes="grep")
    retriever.grep.timeout = 2.0
    res = retriever.retrieve(file="user.py", line=2)
    assert res.context == expected.context
    assert res.skipped == []


def test_a_class_usage_probe_finds_constructions_calls_and_annotations_not_declarations(
    tmp_path,
):
    """rg and the Python-side check agree on the usage template of a class: construction
    (generic too), static calls and type annotations match; a bare declaration, a generic
    one, an array type and a subscript (``Optional[int]``: every annotation) do not."""
    from greprag.matching import LineMatcher
    from greprag.rg import SearchSpec, build_argv, collect_plain, find_rg, spawn, wait_for
    from greprag.router.names import Name
    from greprag.router.probes import usage
    from greprag.routes.grep import rg_pattern

    lines = [
        "List<Widget> all = new ArrayList<>();",  # 1: no use of Widget as a class
        "Widget one = new Widget();",  # 2
        "Widget<String> two = new Widget<>(size);",  # 3
        "Map<K, V> m = new Widget<K, V>(a, b);",  # 4
        "Widget[] many = new Widget(3).split();",  # 5
        "Widget.register(one);",  # 6
        "def f(w: Widget) -> None:",  # 7
        "Widget<String> declared;",  # 8: declarations only
        "Widget[] empty;",  # 9
        "Widgets.count();",  # 10: another name
        "def g(w: t.List[Widget]) -> Widget[int]:",  # 11
    ]
    (tmp_path / "A.java").write_text("\n".join(lines) + "\n")
    query = usage(Name("Widget", "class"), None, 1.0)
    proc = spawn(build_argv(find_rg(), SearchSpec(patterns=(rg_pattern(query),))), tmp_path)
    found = {m.line_number for m in collect_plain(wait_for(proc, 10.0)[0]).matches}
    assert found == {2, 3, 4, 5, 6, 7}
    matcher = LineMatcher.compile(query.pattern, trusted=True)
    assert matcher is not None
    assert {n for n, text in enumerate(lines, 1) if matcher.search(text)} == found


def test_a_probe_limited_to_a_folder_runs_over_the_files_directly_in_it(tmp_path):
    """``pkg/`` in a probe's paths (a Go package) stands for the files directly in that
    folder, whether rg walks the repository or is handed its file list; ``./`` for the
    root's."""
    from greprag import Retriever
    from greprag.cursor_file import CursorFile
    from greprag.files import FileCache
    from greprag.models import Query, QueryPlan
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute

    for path, name in [("pkg/a.go", "Alpha"), ("pkg/b.go", "Beta"), ("pkg/sub/c.go", "Gamma")]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"package x\n\nfunc {name}() {{}}\n")
    (tmp_path / "root.go").write_text("package x\n\nfunc Delta() {}\n")
    (tmp_path / "user.go").write_text("package main\n\nfunc main() {\n\tpkg.\n}\n")
    exported = r"^func\s+([A-Z]\w*)"
    ctx = Retriever(tmp_path, routes="grep").local_context("user.go", 4, 5)
    route = GrepRoute(tmp_path)
    for folder, expected in [("pkg/", {"pkg/a.go", "pkg/b.go"}), ("./", {"root.go"})]:
        query = Query(exported, "method", False, "go", "*", "import", 1.0, 4, (folder,))
        for listed in (False, True):
            if listed:
                route.files("go")  # the file list is fresh: rg is handed the folder's files
            request = RouteRequest(
                QueryPlan(queries=[query]), ctx, FileCache(tmp_path), CursorFile("user.go"), 4
            )
            found = {c.path for c in route.search(request).candidates}
            assert found == expected, (folder, listed, found)


def test_a_folder_probe_never_lists_a_folder_outside_the_repository(tmp_path):
    """``../x/`` by name, or ``link/`` a link to a folder outside: no file of theirs is
    searched, however the probe came to name them (a model's plan)."""
    from greprag import Retriever
    from greprag.cursor_file import CursorFile
    from greprag.files import FileCache
    from greprag.models import Query, QueryPlan
    from greprag.routes import RouteRequest
    from greprag.routes.grep import GrepRoute

    outside, repo = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    repo.mkdir()
    (outside / "secret.go").write_text("package x\n\nfunc Secret() {}\n")
    (repo / "link").symlink_to(outside, target_is_directory=True)
    (repo / "user.go").write_text("package main\n\nfunc main() {\n\tx.\n}\n")
    ctx = Retriever(repo, routes="grep").local_context("user.go", 4, 3)
    route = GrepRoute(repo)
    queries = [
        Query(r"^func\s+([A-Z]\w*)", "method", False, "go", "*", "import", 1.0, 4, (folder,))
        for folder in ("link/", "../outside/")
    ]
    request = RouteRequest(
        QueryPlan(queries=queries), ctx, FileCache(repo), CursorFile("user.go"), 4
    )
    assert route._folder_files({"link/", "../outside/"}) == []
    assert route.search(request).candidates == []
