"""The worker's word index answers exactly as the rg words pass does (real rg, real
files), stays fresh as files change, and leaves to rg what it cannot answer alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import greprag.files
from greprag.rg import SearchSpec, find_rg, run_words
from greprag.routes import similar_index
from greprag.routes.similar_index import INLINE_REREADS, OccurrenceIndex, Occurrences

FILES = {
    "pkg/a.py": "def load(path):\n    data = read(path)  # load the data\n    return data\n",
    "pkg/b.py": "load load load\nfoo_load loadx éload loadé\r\nx = load(data)\r\n",
    "pkg/many.py": "".join(f"value_{i} = load(data)\n" for i in range(40)),
    "pkg/empty.py": "",
    "pkg/big.py": "load = data\n" + "# padding\n" * 400,
    "other/c.py": "class Loader:\n    def load(self, data):\n        return self.data\n",
}
WORDS = [("load", "data"), ("data",), ("read", "path", "Loader", "self"), ("nowhere", "load")]


def _spec(
    paths: list[str],
    words: tuple[str, ...],
    per_file: int = 50,
    size: str = "1M",
    per_word: int = 0,
):
    return SearchSpec(
        patterns=words,
        langs=("python",),
        max_count_per_file=per_file,
        max_per_word=per_word,
        max_filesize=size,
        paths=tuple(paths),
    )


def _as_dict(found) -> dict[str, tuple[list[int], list[int]]]:
    return {f.path: (f.lines, f.words) for f in found}


def _settled(held: Occurrences, repo: Path, spec: SearchSpec):
    assert held.answer(str(repo), spec) is None  # not read yet: rg answers, files queued
    _read_all(held)
    return held.answer(str(repo), spec)


def _read_all(held: Occurrences) -> None:
    assert held.busy()
    while held.busy():
        held.work(timeout=10.0)


def _here() -> Occurrences:
    """Files read in this process, so that a test's changed constants apply."""
    return Occurrences(reader=False)


def _rg(repo: Path, spec: SearchSpec):
    return _as_dict(run_words(find_rg(), repo, spec))


@pytest.fixture(autouse=True)
def trusted_at_once(monkeypatch):
    """Files written by a test are read within ``RACY_NS`` of their change, and so are
    read again on every search: trust their stat at once, unless a test says otherwise."""
    monkeypatch.setattr(greprag.files, "RACY_NS", -(10**18))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    return tmp_path


@pytest.mark.parametrize(("per_file", "per_word"), [(50, 0), (2, 0), (50, 3), (5, 1)])
@pytest.mark.parametrize("words", WORDS)
def test_the_index_answers_as_rg_does(repo, words, per_file, per_word):
    spec = _spec(sorted(FILES), words, per_file, per_word=per_word)
    held = Occurrences()  # files read by the reader child
    assert held.answer(str(repo), spec) is None
    _read_all(held)
    read = held.stats()["postings"]
    found = held.answer(str(repo), spec)
    assert found is not None and held.stats()["postings"] == read  # nothing read again here
    assert _as_dict(found) == _rg(repo, spec)
    assert held._reader is None  # all read: the child is gone


def test_listed_files_over_the_size_limit_are_read_as_rg_reads_them(repo):
    spec = _spec(sorted(FILES), ("load",), size="1K")
    found = _as_dict(_settled(_here(), repo, spec))
    assert "pkg/big.py" in found
    assert found == _rg(repo, spec)


def test_a_changed_or_deleted_file_is_never_answered_stale(repo):
    held = _here()
    spec = _spec(sorted(FILES), ("load", "data"))
    _settled(held, repo, spec)
    (repo / "pkg/a.py").write_text("data = 1\n\n\nload()\n")
    (repo / "pkg/empty.py").write_text("load\n")
    (repo / "other/c.py").unlink()
    spec = _spec(sorted(set(FILES) - {"other/c.py"}), ("load", "data"))
    found = _as_dict(held.answer(str(repo), spec))
    assert found["pkg/a.py"] == ([1, 4], [1, 0])
    assert found == _rg(repo, spec)
    gone = _spec(sorted(FILES), ("load",))  # a listing older than the deletion
    assert "other/c.py" not in _as_dict(held.answer(str(repo), gone))


def test_a_reader_child_that_dies_leaves_its_batch_to_the_worker(repo):
    held = Occurrences()
    spec = _spec(sorted(FILES), ("load", "data"))
    assert held.answer(str(repo), spec) is None
    held.work()  # the first batch goes out to the child
    assert held.waiting() is not None
    held._reader.process.kill()
    held._reader.process.wait()
    _read_all(held)  # the batch comes back to be read here
    assert held.waiting() is None
    assert _as_dict(held.answer(str(repo), spec)) == _rg(repo, spec)


def test_a_file_changed_just_before_it_was_read_is_read_again(repo, monkeypatch):
    """A change within the clock's tick of the last one may leave the stat as it was:
    a file read that soon after a change is read again on every search until older."""
    monkeypatch.setattr(greprag.files, "RACY_NS", 3_000_000_000)
    index = OccurrenceIndex(str(repo))
    for path in ("pkg/a.py", "pkg/b.py"):
        index.read(path)
    os.utime(repo / "pkg/b.py", ns=(0, 0))  # long ago, but ctime is now: still racy
    sizes = sum(len(FILES[p].encode()) for p in ("pkg/a.py", "pkg/b.py"))
    assert index.survey(["pkg/a.py", "pkg/b.py"]) == ([], ["pkg/a.py", "pkg/b.py"], sizes)
    monkeypatch.setattr(greprag.files, "RACY_NS", -(10**18))
    index.read("pkg/a.py")
    assert index.survey(["pkg/a.py", "pkg/c.py"]) == (["pkg/c.py"], [], 0)


def test_many_changed_files_go_to_rg_while_the_worker_reads_them_again(repo):
    held = _here()
    names = [f"m/f{i}.py" for i in range(INLINE_REREADS + 1)]
    for name in names:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("load\n")
    spec = _spec(names, ("load", "data"))
    _settled(held, repo, spec)
    for name in names:
        (repo / name).write_text("x\ndata load\n")
    assert held.answer(str(repo), spec) is None
    _read_all(held)
    assert _as_dict(held.answer(str(repo), spec)) == _rg(repo, spec)


def test_a_big_changed_file_goes_to_rg_while_the_worker_reads_it_again(repo, monkeypatch):
    monkeypatch.setattr(similar_index, "INLINE_REREAD_BYTES", 100)
    held = _here()
    spec = _spec(sorted(FILES), ("load", "data"))
    _settled(held, repo, spec)
    (repo / "pkg/a.py").write_text("data = load\n" * 20)  # 240 bytes: over the inline budget
    assert held.answer(str(repo), spec) is None and held.busy()
    _read_all(held)
    assert _as_dict(held.answer(str(repo), spec)) == _rg(repo, spec)


def test_what_rg_reads_differently_is_left_to_rg(repo):
    (repo / "pkg/bin.py").write_bytes(b"load = 1\0\nload\n")
    held = _here()
    listed = sorted(FILES)
    _settled(held, repo, _spec(listed, ("load",)))
    assert held.answer(str(repo), _spec(listed, ("größe", "load"))) is None  # not ASCII words
    assert held.answer(str(repo), _spec([], ("load",))) is None  # rg walks the repository
    with_binary = _spec([*listed, "pkg/bin.py"], ("load",))
    assert _settled(held, repo, with_binary) is None  # rg calls it binary


def test_a_repository_past_the_cap_is_left_to_rg(repo, monkeypatch):
    monkeypatch.setattr(similar_index, "MAX_POSTINGS", 20)
    held = _here()
    spec = _spec(sorted(FILES), ("load",))
    assert _settled(held, repo, spec) is None
    assert held.answer(str(repo), spec) is None and not held.busy()


def test_an_index_mostly_stale_is_read_again_into_a_fresh_one(repo, monkeypatch):
    monkeypatch.setattr(similar_index, "_SLACK", 0)
    held = _here()
    spec = _spec(sorted(FILES), ("load", "data"))
    _settled(held, repo, spec)
    for name in FILES:
        (repo / name).write_text("data\n")  # every file's old words go stale
    assert _as_dict(held.answer(str(repo), spec)) == _rg(repo, spec)
    assert held.busy()  # a fresh index queued every file
    assert held.answer(str(repo), spec) is None
    _read_all(held)
    assert _as_dict(held.answer(str(repo), spec)) == _rg(repo, spec)
    assert held.stats()["postings"] == len(FILES)


def test_two_repositories_are_indexed_and_a_third_waits_for_one_to_go_idle(tmp_path, monkeypatch):
    repos = []
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(f"load = {name}\n")
        repos.append(str(tmp_path / name))
    spec = _spec(["m.py"], ("load",))
    held = _here()
    for repo in repos[:2]:
        assert _settled(held, Path(repo), spec) is not None
    assert held.answer(repos[2], spec) is None and not held.busy()  # both in use: rg
    monkeypatch.setattr(similar_index, "IDLE_EVICT_S", 0.0)
    found = _settled(held, Path(repos[2]), spec)  # the least recently used one gives way
    assert _as_dict(found) == {"m.py": ([1], [0])}
    assert held.stats()["files"] == 2
