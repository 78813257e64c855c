"""The transport-free service and its warm state, in-process: arguments, the token cap,
roots and path checks, the answer cache, and a branch switch settling to a correct state."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from greprag import GrepRAGError, Retriever
from greprag.server.answers import AnswerCache
from greprag.server.pool import Pool
from greprag.server.service import Service
from tests.conftest import cursor, read_lines
from tests.server.serving import age_files, served_copy


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return served_copy(tmp_path / "py_pipeline")


@pytest.fixture
def service(repo: Path):
    pool = Pool([repo], watch=False)
    yield Service(pool)
    pool.close()


def test_arguments_are_checked_with_one_line_errors(service):
    cases = {
        "unknown argument 'cursor'": ("retrieve", {"cursor": 1}),
        "line must be a int": ("retrieve", {"file": "data/loader.py", "line": True}),
        "spec is required": ("read", {}),
        "unknown operation": ("delete", {}),
        "give file and line, or left_context": ("retrieve", {"line": 3}),
    }
    for expected, (op, args) in cases.items():
        with pytest.raises(GrepRAGError, match=expected) as caught:
            service.run(op, args)
        assert "\n" not in caught.value.reason


def test_read_is_cut_at_the_cap_and_names_the_rest(repo):
    pool = Pool([repo], watch=False)
    small = Service(pool, max_tokens=60)
    answer = small.read("data/loader.py:1-40")
    lines = read_lines(repo, "data/loader.py")
    cut = answer["end_line"]
    assert 1 <= cut < 40 and answer["tokens"] <= 60
    assert answer["text"] == "\n".join(lines[:cut])
    assert answer["more"]["get_more"] == f"read data/loader.py:{cut + 1}-40"
    rest = small.read(answer["more"]["get_more"].split(" ", 1)[1])
    assert rest["start_line"] == cut + 1
    with pytest.raises(GrepRAGError, match="past the end"):
        small.read("data/loader.py:99-100")
    (repo / "blob.bin").write_bytes(b"a\x00b\n")
    with pytest.raises(GrepRAGError, match="binary"):
        small.read("blob.bin")
    pool.close()


def test_the_budget_is_capped_and_the_answer_says_what_was_left_out(repo):
    pool = Pool([repo], watch=False)
    capped = Service(pool, max_tokens=150)
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")
    answer = capped.retrieve(**at.kwargs(), budget=5000)
    assert answer["tokens"] <= 150
    assert "capped at 150 tokens (asked 5000)" in answer["more"]["left_out"]
    if answer["dropped"]:
        first = answer["dropped"][0]
        assert (
            f"{first['path']}:{first['start_line']}-{first['end_line']}"
            in (answer["more"]["get_more"])
        )
    pool.close()


def test_requests_name_a_served_root_and_never_leave_it(tmp_path: Path):
    one = served_copy(tmp_path / "one")
    two = served_copy(tmp_path / "two", "java_orders")
    pool = Pool([one, two], watch=False)
    service = Service(pool)
    with pytest.raises(GrepRAGError, match="several repositories"):
        service.read("data/loader.py:1-2")
    assert service.read("data/loader.py:1-2", repo="one")["path"] == "data/loader.py"
    assert service.read(f"{one}/data/loader.py:1-2")["text"].startswith('"""DataLoader')
    with pytest.raises(GrepRAGError, match="not a served repository"):
        service.read("data/loader.py:1-2", repo=str(tmp_path))
    (tmp_path / "outside.py").write_text("SECRET = 1\n")
    (one / "link.py").symlink_to(tmp_path / "outside.py")
    for spec in ("link.py", "../outside.py", str(tmp_path / "outside.py"), "/etc/passwd"):
        with pytest.raises(GrepRAGError, match="outside"):
            service.read(spec, repo="one")
    pool.close()


def test_answers_are_kept_while_their_files_are_unchanged(repo, service):
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")
    unwatched = service.run("retrieve", at.kwargs())
    assert service.run("retrieve", at.kwargs()).cached is False, "no watcher: no answers kept"
    pool = Pool([repo], watch=True)
    pool.start()
    watched = Service(pool)
    try:
        first = watched.run("retrieve", at.kwargs())
        again = watched.run("retrieve", at.kwargs())
        assert (first.cached, again.cached) == (False, True)
        assert again.payload == first.payload
        assert first.payload["blocks"] == unwatched.payload["blocks"]
        quoted = first.payload["blocks"][0]["path"]
        target = repo / quoted
        target.write_text(target.read_text() + "\n")  # any stat change: recomputed at once
        assert watched.run("retrieve", at.kwargs()).cached is False
    finally:
        pool.close()
    cache = AnswerCache(repo)
    begun = cache.begin()
    cache.clear()  # a batch of changes arrived while the answer was computed
    assert cache.put("k", {}, [quoted], begun) is False
    assert cache.put("k", {}, [quoted], cache.begin()) is False, "a file just written"
    age_files(repo)
    assert cache.put("k", {"x": 1}, [quoted], cache.begin()) is True
    assert cache.get("k") == {"x": 1}


def _write_modules(repo: Path, names: range) -> None:
    folder = repo / "gen"
    folder.mkdir(exist_ok=True)
    for i in names:
        (folder / f"mod_{i}.py").write_text(
            f'"""Generated module {i}."""\n\n\ndef helper_{i}(rows, size={i}):\n'
            f'    """Split rows into chunks of {i}."""\n'
            f"    return [rows[k : k + size] for k in range(0, len(rows), size)]\n"
        )


def _git(repo: Path, *argv: str) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, *argv], cwd=repo, check=True, capture_output=True)


def test_a_branch_switch_settles_to_the_answers_of_a_fresh_retriever(repo):
    """60 renames, deletes and edits at once: once settled, the warm server answers exactly
    what a cold Retriever on the new tree answers."""
    _write_modules(repo, range(60))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "modules")
    _git(repo, "checkout", "-q", "-b", "other")
    (repo / "gen2").mkdir()
    for i in range(20):
        _git(repo, "mv", f"gen/mod_{i}.py", f"gen2/mod_{i}.py")
    for i in range(20, 40):
        _git(repo, "rm", "-q", f"gen/mod_{i}.py")
    for i in range(40, 60):
        path = repo / "gen" / f"mod_{i}.py"
        path.write_text(path.read_text().replace("Split rows", "Cut rows"))
    _git(repo, "commit", "-q", "-am", "switch")
    _git(repo, "checkout", "-q", "main")
    age_files(repo)
    cursors = [
        {"left_context": f"rows = load()\nparts = helper_{i}(", "language": "python"}
        for i in (3, 25, 45, 61)
    ]
    pool = Pool([repo], watch=True, debounce_ms=300)
    pool.start()
    service = Service(pool)
    workspace = pool.workspace()
    try:
        before = [service.retrieve(**c) for c in cursors]
        assert any(b["path"] == "gen/mod_3.py" for b in before[0]["blocks"])
        _git(repo, "checkout", "-q", "other")
        deadline = time.monotonic() + 30
        while not (workspace.watcher.batches and workspace.settled()):
            assert time.monotonic() < deadline, "no settled state within 30 s"
            time.sleep(0.05)
        fresh = Retriever(repo)
        for c in cursors:
            warm = service.retrieve(**c)
            cold = fresh.retrieve(**c).to_dict()
            assert warm["blocks"] == cold["blocks"], c
            paths = {b["path"] for b in warm["blocks"]}
            assert not any(
                os.path.basename(p) in {f"mod_{i}.py" for i in range(20, 40)} for p in paths
            )
        moved = service.retrieve(**cursors[0])
        assert "gen2/mod_3.py" in {b["path"] for b in moved["blocks"]}
    finally:
        pool.close()


def test_a_file_deleted_before_the_watcher_reports_it_does_not_fail_a_request(repo, service):
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")
    service.retrieve(**at.kwargs())  # the grep route now holds the python file list
    (repo / "data" / "cache.py").unlink()
    again = service.run("retrieve", {**at.kwargs(), "budget": 4000})  # not a cached answer
    assert again.payload["blocks"] and not again.cached
