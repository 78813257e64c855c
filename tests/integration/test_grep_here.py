"""Limited probes matched in-process: the very lines real rg prints, or rg itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from greprag import files
from greprag.files import FileCache, FileStore
from greprag.models import Query
from greprag.rg import parse_size
from greprag.routes import grep
from greprag.routes.grep import GrepRoute

EVERY_NAME = r"^(class|(async\s+)?def)\s+([A-Za-z_]\w*)\b|^([A-Za-z_]\w*)\s*(:[^=\n]+)?=[^=]"
NAMES = r"^\s*(class|(async\s+)?def)\s+(Config|load)\b|^(Config|load)\s*(:[^=\n]+)?=[^=]"

MODULE = (
    "".join(f"NAME_{i} = {i}\n" for i in range(40))  # past rg's per-file cap of 30
    + "名前 = 1\nx = 'é'\nlabel: str = 'a'\nflag == 2\n"
    + "def load(path):\n    load = 2\n\u00a0def load(): pass\n"
    + "class Config:\n    Config = 1\nload=\nload =x\n"
)


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Store entries count as trusted at once (the racy window made empty)."""
    monkeypatch.setattr(files, "RACY_NS", -(10**18))


def _queries(*paths: str) -> list[Query]:
    every = Query(EVERY_NAME, "method", False, "python", "*", "import", 0.7, 4, paths[:1])
    names = Query(NAMES, "class", False, "python", "Config,load", "definition", 0.5, 4, paths)
    return [every, names]


def _searches(repo: Path, queries: list[Query], store: FileStore | None, spawned: list[str]):
    """Each search's matches of the queries, through ``GrepRoute._run`` (the processes
    it started into ``spawned``)."""
    route = GrepRoute(repo)
    popen = route._popen

    def spy(argv, stderr=None):
        if "-e" in argv:  # a search (not the listing of the files)
            spawned.append(" ".join(argv))
        return popen(argv) if stderr is None else popen(argv, stderr)

    route._popen = spy  # type: ignore[method-assign]
    compiled = [c for i, q in enumerate(queries) if (c := grep._compile(i, q)) is not None]
    cache = FileCache(repo, store) if store else None
    searches, skipped, rejected = route._run(compiled, 1, None, cache)
    assert not rejected
    return [[(m.path, m.line_number, m.text) for m in s.matches] for s in searches], skipped


def test_limited_probes_matched_here_print_what_rg_prints(tmp_path: Path, trusting):
    (tmp_path / "mod.py").write_text(MODULE)
    (tmp_path / "conf.py").write_text("class Config:\n    load = 1\n\ndef load():\n    pass\n")
    queries = _queries("mod.py", "conf.py")
    by_rg: list[str] = []
    expected, _ = _searches(tmp_path, queries, None, by_rg)
    here: list[str] = []
    found, _ = _searches(tmp_path, queries, FileStore(tmp_path), here)
    assert found == expected
    assert len(by_rg) == 2 and here == []  # no process for either limited group
    every = expected[0]
    assert len(every) == 30  # rg's --max-count, kept here too
    names = {(path, line) for path, line, _ in expected[1]}
    assert ("conf.py", 4) in names and ("mod.py", 50) not in names  # ``load = 2`` is indented


@pytest.mark.parametrize(
    "content",
    [
        MODULE.replace("\n", "\r\n"),  # rg sees the CR the stored lines drop
        MODULE + "tail = 1\0\n",  # rg reports a binary file
        "\ufeff" + MODULE,  # a byte-order mark
    ],
    ids=["crlf", "nul", "bom"],
)
def test_a_file_rg_reads_otherwise_goes_to_rg(tmp_path: Path, trusting, content: str):
    (tmp_path / "mod.py").write_bytes(content.encode("utf-8"))
    store = FileStore(tmp_path)
    lines = store.lines("mod.py")
    assert lines and store.plain_size("mod.py", lines) is None
    queries = _queries("mod.py")
    expected, skipped = _searches(tmp_path, queries, None, [])
    spawned: list[str] = []
    assert _searches(tmp_path, queries, store, spawned) == (expected, skipped)
    assert len(spawned) == 2


def test_many_files_or_a_large_one_go_to_rg(tmp_path: Path, trusting):
    paths = [f"m{i}.py" for i in range(grep.MAX_FILES_HERE + 1)]
    for path in paths:
        (tmp_path / path).write_text(MODULE)
    queries = _queries(*paths)
    expected, skipped = _searches(tmp_path, queries, None, [])
    spawned: list[str] = []
    assert _searches(tmp_path, queries, FileStore(tmp_path), spawned) == (expected, skipped)
    assert len(spawned) == 1 and paths[-1] in spawned[0]  # the names probe, over five files
    (tmp_path / "big.py").write_text(MODULE + "x = 1\n" * 200_000)
    cache = FileCache(tmp_path, FileStore(tmp_path))
    assert cache.plain("m0.py", parse_size("1M")) == cache.get("m0.py")
    assert cache.plain("big.py", parse_size("1M")) is None  # rg skips it: --max-filesize


def test_a_retrieval_matches_a_modules_names_here_as_rg_did(
    tmp_path: Path, trusting, monkeypatch: pytest.MonkeyPatch
):
    from greprag import Retriever

    (tmp_path / "mod.py").write_text(MODULE)
    (tmp_path / "user.py").write_text("import mod\n\n\ndef run():\n    return mod.")
    args = {"file": "user.py", "line": 5, "column": 15}
    here = Retriever(tmp_path, routes="grep").retrieve(**args)
    assert any(q.identifier == "*" and q.paths == ("mod.py",) for q in here.queries)
    monkeypatch.setattr(grep, "MAX_FILES_HERE", 0)  # every limited probe goes to rg
    assert Retriever(tmp_path, routes="grep").retrieve(**args).context == here.context
