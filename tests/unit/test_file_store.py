"""The per-repo file store kept across retrievals: reuse while unchanged, never stale."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from greprag import Retriever, files
from greprag.files import FileCache, FileStore, LinesMemo, file_text
from greprag.tokens import count_tokens, get_encoding
from tests.conftest import FIXTURES, cursor


def _write(path: Path, text: str, *, age_s: float = 0.0) -> None:
    path.write_text(text)
    if age_s:
        stamp = time.time() - age_s
        os.utime(path, (stamp, stamp))


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries count as trusted at once (the racy window made empty)."""
    monkeypatch.setattr(files, "RACY_NS", -(10**18))


def test_unchanged_file_keeps_its_lines_object(tmp_path: Path, trusting):
    _write(tmp_path / "a.py", "x = 1\ny = 2\n")
    store = FileStore(tmp_path)
    first = store.lines("a.py")
    assert first == ("x = 1", "y = 2")
    assert store.lines("a.py") is first


def test_an_edit_is_seen_at_once(tmp_path: Path, trusting):
    target = tmp_path / "a.py"
    _write(target, "x = 1\n")
    store = FileStore(tmp_path)
    assert store.lines("a.py") == ("x = 1",)
    _write(target, "x = 1\ny = 22\n")
    assert store.lines("a.py") == ("x = 1", "y = 22")


def test_same_size_edit_with_restored_mtime_is_seen_while_racy(tmp_path: Path):
    """An edit that keeps size and mtime (ctime tick too coarse to tell) is caught by the
    re-read of a recently changed file."""
    target = tmp_path / "a.py"
    _write(target, "x = 1\n")
    before = os.stat(target)
    store = FileStore(tmp_path)
    assert store.lines("a.py") == ("x = 1",)
    target.write_text("x = 2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert store.lines("a.py") == ("x = 2",)


def test_unchanged_racy_file_keeps_its_lines_object(tmp_path: Path):
    """A recently changed file is read again on each use, but the same content keeps
    the same lines object (so per-content caches still hit)."""
    _write(tmp_path / "a.py", "x = 1\n")
    store = FileStore(tmp_path)
    first = store.lines("a.py")
    assert store.lines("a.py") is first


def test_deleted_file_and_symlink_out_give_nothing(tmp_path: Path, trusting):
    repo, outside = tmp_path / "repo", tmp_path / "secret.txt"
    repo.mkdir()
    outside.write_text("password\n")
    _write(repo / "a.py", "x = 1\n")
    store = FileStore(repo)
    assert store.lines("a.py") == ("x = 1",) and store.allowed("a.py")
    (repo / "a.py").unlink()
    assert store.lines("a.py") is None
    (repo / "a.py").symlink_to(outside)
    assert store.lines("a.py") is None
    assert not store.allowed("a.py")
    assert store.lines("../secret.txt") is None and not store.allowed("../secret.txt")


def test_invalidate_drops_entries(tmp_path: Path, trusting):
    _write(tmp_path / "a.py", "x = 1\n")
    store = FileStore(tmp_path)
    first = store.lines("a.py")
    store.invalidate(["a.py"])
    again = store.lines("a.py")
    assert again == first and again is not first
    store.invalidate(None)
    assert store.lines("a.py") is not again


def test_store_keeps_at_most_max_chars(tmp_path: Path, trusting):
    for name in "abc":
        _write(tmp_path / f"{name}.py", name * 40 + "\n")
    store = FileStore(tmp_path, max_chars=100)
    kept = {name: store.lines(f"{name}.py") for name in "abc"}
    assert store.lines("c.py") is kept["c"]
    assert store.lines("a.py") is not kept["a"]  # evicted: read again
    assert store._chars <= 100


def test_file_cache_reads_through_the_store(tmp_path: Path, trusting):
    _write(tmp_path / "a.py", "x = 1\n")
    store = FileStore(tmp_path)
    one, two = FileCache(tmp_path, store), FileCache(tmp_path, store)
    assert one.get("a.py") is two.get("a.py")
    assert one.get("missing.py") == () and not one.allowed("../x")


def test_lines_memo_is_keyed_by_the_object():
    memo = LinesMemo(2)
    lines, same_content = ["a", "b"], ["a", "b"]
    calls = []

    def compute(value):
        calls.append(value)
        return value

    assert memo.get(lines, "t", lambda: compute(1)) == 1
    assert memo.get(lines, "t", lambda: compute(2)) == 1
    assert memo.get(same_content, "t", lambda: compute(3)) == 3
    assert memo.get(lines, "other", lambda: compute(4)) == 4
    assert calls == [1, 3, 4]
    assert file_text(lines) == "a\nb" and file_text(lines) is file_text(lines)


def test_token_counts_are_remembered_exactly():
    text = "def f(x):\n    return x + 1\n"
    exact = len(get_encoding().encode(text, disallowed_special=()))
    assert count_tokens(text) == exact == count_tokens(text)
    assert count_tokens(text, "o200k_base") == len(
        get_encoding("o200k_base").encode(text, disallowed_special=())
    )


def test_warm_retriever_never_answers_with_old_text(tmp_path: Path):
    """Edit a definition the retrieval returns: the next answer shows the new text, with
    or without ``invalidate``, however little time passed."""
    repo = tmp_path / "py_pipeline"
    shutil.copytree(FIXTURES / "py_pipeline", repo)
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")
    retriever = Retriever(repo, routes="grep")
    loader = repo / "data" / "loader.py"
    original = loader.read_text()
    assert any(b.path == "data/loader.py" for b in retriever.retrieve(**at.kwargs()).blocks)
    for round_, call_invalidate in enumerate((False, True, False)):
        marker = f"EDITED_{round_}"
        loader.write_text(original.replace("def load_batch(", f"def load_batch({marker}, ", 1))
        if call_invalidate:
            retriever.invalidate(["data/loader.py"])
        result = retriever.retrieve(**at.kwargs())
        shown = [b.text for b in result.blocks if b.path == "data/loader.py"]
        assert shown and any(marker in text for text in shown), result.context
        for other in range(round_):
            assert f"EDITED_{other}" not in result.context
    assert count_tokens(result.context) == result.tokens


def test_the_token_count_cache_keeps_to_its_size_oldest_out_first(monkeypatch):
    import gc

    from greprag import tokens

    monkeypatch.setattr(tokens, "_COUNTS", {})
    monkeypatch.setattr(tokens, "_counted_chars", {})
    monkeypatch.setattr(tokens, "_COUNTS_MAX_CHARS", 400)
    texts = [f"value_{n} = compute_{n}(argument_{n})\n" for n in range(40)]
    exact = [len(get_encoding().encode(t, disallowed_special=())) for t in texts]
    assert [count_tokens(t) for t in texts] == exact
    kept = tokens._COUNTS["cl100k_base"]
    assert sum(map(len, kept)) == tokens._counted_chars["cl100k_base"] <= 400
    assert texts[-1] in kept and texts[0] not in kept  # the oldest went first
    assert [count_tokens(t) for t in texts] == exact  # counted again, as exactly
    assert not gc.is_tracked(kept)  # str keys, int values: never walked by a collection
