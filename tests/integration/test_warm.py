"""Idle-time warming of the per-file caches (``greprag.warm``): what it fills, that it
waits while a retrieval runs, that it stops at each cache's share, that the counts it
leaves are exact, and that a retriever's contexts are the same with it or without."""

from __future__ import annotations

import random
import threading
import time
from itertools import pairwise
from pathlib import Path

import pytest

import greprag
from greprag import Retriever, tokens
from greprag.files import FileStore, LinesMemo
from greprag.fusion import bm25, pack
from greprag.syntax import analysis, scan
from greprag.syntax.outline import outlines_ahead
from greprag.tokens import count_tokens, get_encoding, piece_starts
from greprag.warm import CacheWarmer
from tests.conftest import cursor

ENCODING = "cl100k_base"


@pytest.fixture
def clean_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty module caches: what earlier tests left would hide what warming fills."""
    monkeypatch.setattr(scan, "_SCANS", LinesMemo(1024))
    monkeypatch.setattr(pack, "_HEADERS", LinesMemo(4096))
    monkeypatch.setattr(tokens, "_COUNTS", {})
    monkeypatch.setattr(tokens, "_counted_chars", {})
    monkeypatch.setattr(bm25, "_FILE_TOKENS", LinesMemo(2048))
    monkeypatch.setattr(analysis, "_FILE_SKELETONS", LinesMemo(2048))


def _python_files(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in repo.rglob("*.py"))


def _recording(store: FileStore) -> tuple[list[str], object]:
    seen: list[str] = []

    def lines_of(path: str):
        seen.append(path)
        return store.lines(path)

    return seen, lines_of


def _never() -> object:
    raise AssertionError("computed again: the warming did not keep it")


def _file_pieces(lines) -> list[str]:
    return tokens._line_pieces("\n".join(lines) + "\n")


def test_warming_reads_scans_finds_headers_and_tokenizes_every_queued_file(clean_caches):
    package = Path(greprag.__file__).parent  # real, varied source files
    store = FileStore(package)
    paths = _python_files(package)
    seen, lines_of = _recording(store)
    warmer = CacheWarmer(lines_of, ENCODING)
    warmer.warm(paths)
    assert warmer.wait(60)
    assert sorted(seen) == paths
    counts = tokens._COUNTS[ENCODING]
    for path in paths:
        lines = store.lines(path)
        scanned = scan._SCANS.get(lines, True, _never)
        assert scanned._tops is not None and scanned._margins is not None
        assert isinstance(pack._HEADERS.get(lines, ("headers", 0), _never), list)
        missing = [p for p in _file_pieces(lines) if p not in counts]
        assert not missing, f"{path}: {missing[:3]}"
        assert bm25._FILE_TOKENS.peek(lines, "tokens") is not None


def test_warming_parses_each_java_files_skeleton_whole_and_builds_its_scan_tables(
    clean_caches,
):
    repo = Path(__file__).parents[1] / "fixtures" / "java_orders"
    store = FileStore(repo)
    paths = sorted(str(p.relative_to(repo)) for p in repo.rglob("*.java"))
    assert len(paths) >= 3
    warmer = CacheWarmer(store.lines, ENCODING)
    warmer.warm(paths)
    assert warmer.wait(60)
    for path in paths:
        lines = store.lines(path)
        kept = analysis.kept_skeleton(lines, "java")
        assert kept is not None and any(span.kind == "class" for span in kept.defs), path
        assert scan._SCANS.get(lines, False, _never).openers is not None  # built ahead too


def test_a_skeleton_parse_a_retrieval_interrupts_is_given_up_and_not_kept(clean_caches):
    """A long file's parse would hold the interpreter for a retrieval arriving meanwhile:
    it gives up when told to, and keeps nothing (the retrieval parses what it needs)."""
    members = [f"    int f{i}() {{ return {i}; }}" for i in range(1600)]
    long_file = ("class Big {", *members, "}")
    asked = []

    def retrieval_arrives() -> bool:
        asked.append(True)
        return len(asked) > 3

    assert outlines_ahead("Big.java", long_file, retrieval_arrives)
    assert analysis.kept_skeleton(long_file, "java") is None
    assert outlines_ahead("Big.java", long_file, lambda: False)
    kept = analysis.kept_skeleton(long_file, "java")
    assert kept is not None and len([s for s in kept.defs if s.kind == "function"]) == 1600
    from greprag.syntax.grammars import parse

    assert parse("java", b"class After { int g() { return 1; } }").root_node.has_error is False


def test_counts_after_warming_are_the_encoders_own(clean_caches):
    package = Path(greprag.__file__).parent
    store = FileStore(package)
    paths = _python_files(package)
    warmer = CacheWarmer(store.lines, ENCODING)
    warmer.warm(paths)
    assert warmer.wait(60)
    encoder = get_encoding(ENCODING)
    pick = random.Random(7)
    for path in paths:
        lines = store.lines(path)
        for _ in range(5):
            low = pick.randrange(len(lines))
            high = pick.randrange(low, len(lines)) + 1
            text = "\n".join(lines[low:high])
            assert count_tokens(text, ENCODING) == len(encoder.encode_ordinary(text)), path


def test_piece_starts_cut_where_a_piece_starts():
    lines = Path(pack.__file__).read_text(encoding="utf-8").split("\n")
    starts = piece_starts(lines, 64)
    assert starts[0] == 0 and len(starts) > 3
    assert all(b - a >= 64 for a, b in pairwise(starts))
    assert all(tokens._opens_piece(lines[n]) for n in starts[1:])
    sliced = [
        piece
        for low, high in pairwise([*starts, len(lines)])
        for piece in tokens._line_pieces("\n".join(lines[low:high]) + "\n")
    ]
    assert sliced == _file_pieces(lines)


def test_warming_waits_while_any_retrieval_runs(py_repo, clean_caches):
    seen, lines_of = _recording(FileStore(py_repo))
    warmer = CacheWarmer(lines_of, ENCODING)
    other = CacheWarmer(lines_of, ENCODING)  # another retriever's, in the same process
    paths = _python_files(py_repo)
    with other.retrieving():
        warmer.warm(paths)
        time.sleep(0.3)
        assert seen == []
        assert not warmer.wait(0.05)
    assert warmer.wait(30)
    assert sorted(seen) == paths


def test_a_full_share_stops_that_cache_only(py_repo, clean_caches, monkeypatch):
    monkeypatch.setattr(tokens, "_COUNTS_MAX_CHARS", 400)  # half of it: a file or two
    store = FileStore(py_repo)
    warmer = CacheWarmer(store.lines, ENCODING)
    paths = _python_files(py_repo)
    warmer.warm(paths)
    assert warmer.wait(30)
    assert tokens._counted_chars[ENCODING] < 400 + 128 * 200  # stopped after one more step
    for path in paths:  # the scans went on to the last file (an empty one has none)
        if lines := store.lines(path):
            scanned = scan._SCANS.get(lines, True, _never)
        assert scanned._tops is not None and scanned._margins is not None


def test_warming_stops_reading_once_the_store_is_half_full(py_repo, clean_caches):
    store = FileStore(py_repo, max_chars=1200)
    seen, lines_of = _recording(store)
    warmer = CacheWarmer(lines_of, ENCODING, store.half_full)
    paths = _python_files(py_repo)
    warmer.warm(paths)
    assert warmer.wait(30)
    assert store.half_full()
    assert 1 <= len(seen) < len(paths)


def test_the_thread_ends_and_a_later_queue_starts_another(py_repo, clean_caches):
    seen, lines_of = _recording(FileStore(py_repo))
    warmer = CacheWarmer(lines_of, ENCODING)
    first, *rest = _python_files(py_repo)
    warmer.warm([first])
    assert warmer.wait(30)
    for thread in threading.enumerate():
        if thread.name == "greprag-warm":
            thread.join(5)
    assert not any(t.name == "greprag-warm" and t.is_alive() for t in threading.enumerate())
    warmer.warm([first, *rest])  # the first again: queued once only
    assert warmer.wait(30)
    assert seen == [first, *rest]


CURSORS = [
    ("pipeline/processor.py", "self.loader.", "self.loader."),
    ("data/loader.py", "return ", "return "),
]


def test_a_retriever_warms_from_its_second_retrieval(py_repo, clean_caches, monkeypatch):
    queued: list[list[str]] = []
    warm = CacheWarmer.warm

    def spy(self, paths):
        queued.append(list(paths))
        warm(self, paths)

    monkeypatch.setattr(CacheWarmer, "warm", spy)
    retriever = Retriever(py_repo)
    where = cursor(py_repo, *CURSORS[0]).kwargs()
    retriever.retrieve(**where)
    assert queued == []  # a one-shot call never warms
    retriever.retrieve(**where)
    retriever.retrieve(**cursor(py_repo, *CURSORS[1]).kwargs())
    assert len(queued) == 1  # once per language
    assert sorted(queued[0]) == sorted(retriever.grep.files("python"))
    assert retriever.warmed(30)
    for path in queued[0]:
        if lines := retriever.files.lines(path):
            scanned = scan._SCANS.get(lines, True, _never)
        assert scanned._tops is not None and scanned._margins is not None


def test_contexts_are_the_same_warmed_or_not(py_repo, clean_caches, monkeypatch):
    def contexts(retriever: Retriever) -> list[str]:
        out = []
        for spot in CURSORS:
            where = cursor(py_repo, *spot).kwargs()
            retriever.retrieve(**where)
            assert retriever.warmed(30)
            out.append(retriever.retrieve(**where).context)
        return out

    warmed = contexts(Retriever(py_repo))
    monkeypatch.setattr(scan, "_SCANS", LinesMemo(1024))
    monkeypatch.setattr(pack, "_HEADERS", LinesMemo(4096))
    monkeypatch.setattr(tokens, "_COUNTS", {})
    monkeypatch.setattr(tokens, "_counted_chars", {})
    monkeypatch.setattr(CacheWarmer, "warm", lambda self, paths: None)
    assert contexts(Retriever(py_repo)) == warmed
