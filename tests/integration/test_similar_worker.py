"""The similar route's worker process: the same regions as the route's own thread, and a
retrieval that goes on when the worker is busy, gone or never sent its answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from greprag import Retriever
from greprag.cursor_file import CursorFile
from greprag.rg import SearchSpec, find_rg
from greprag.routes import similar_worker
from greprag.routes.similar import SimilarRoute
from greprag.routes.similar_rank import Term
from greprag.routes.similar_worker import WordsJob, WordsWorker
from tests.conftest import cursor

CURSORS = [
    ("pipeline/processor.py", "self.loader.", "self.loader."),
    ("pipeline/processor.py", "def ", "def "),
    ("data/loader.py", "return ", "return "),
]


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch):
    """A worker of this test's own, started and ready, as the process's shared one."""
    own = WordsWorker()
    monkeypatch.setattr(similar_worker, "_shared", own)
    assert own.ready(timeout=30), "the worker did not start"
    yield own
    own.close()


def _contexts(repo: Path, **settings) -> list[str]:
    retriever = Retriever(repo, **settings)
    contexts = []
    for spot in CURSORS:
        where = cursor(repo, *spot).kwargs()
        retriever.retrieve(**where)  # lists the repository: the next one is warm
        contexts.append(retriever.retrieve(**where).context)
    return contexts


def test_the_worker_finds_what_the_routes_thread_finds(py_repo, worker):
    in_thread = _contexts(py_repo, similar_process=False)
    assert worker._jobs == 0
    in_worker = _contexts(py_repo)
    assert worker._jobs >= len(CURSORS)  # the warm retrievals' words passes ran there
    assert in_worker == in_thread


def test_a_settled_worker_answers_from_its_index_what_rg_answers(py_repo, worker):
    in_thread = _contexts(py_repo, similar_process=False)
    _contexts(py_repo)  # the worker's first searches queue the repository's files
    before = worker.settle(timeout=30)
    assert before is not None and before["files"] >= 3 and before["postings"] > 0
    assert _contexts(py_repo) == in_thread
    assert worker.settle(timeout=30)["answered"] >= before["answered"] + len(CURSORS)


def test_once_the_index_answers_the_grep_pass_gets_every_core(py_repo, worker):
    retriever = Retriever(py_repo)
    similar = next(r for r in retriever.routes if isinstance(r, SimilarRoute))
    where = cursor(py_repo, *CURSORS[0]).kwargs()
    retriever.retrieve(**where)
    retriever.retrieve(**where)  # the worker's first search: rg, while it reads the files
    assert similar.reads_alongside("python")
    assert worker.settle(timeout=30)
    retriever.retrieve(**where)
    assert not similar.reads_alongside("python")


def test_a_retrieval_goes_on_in_its_thread_when_the_worker_dies(py_repo, worker):
    expected = _contexts(py_repo, similar_process=False)
    worker._process.kill()
    worker._process.wait()
    assert _contexts(py_repo) == expected
    assert not worker.ready()  # found gone: the searches stay in this process


def _job(repo: Path, words: tuple[str, ...]) -> WordsJob:
    return WordsJob(
        rg=str(find_rg()),
        repo=str(repo),
        spec=SearchSpec(patterns=words, langs=("python",)),
        listing=0,
        searched=10,
        terms=tuple(Term(w, 1.0) for w in words),
        current=CursorFile(),
        folder=None,
        timeout=20.0,
    )


def test_a_search_left_unread_frees_the_worker_and_its_answer_is_skipped(py_repo, worker):
    abandoned = worker.submit(_job(py_repo, ("loader", "records")), None)
    assert abandoned is not None
    assert worker.submit(_job(py_repo, ("batch", "records")), None) is None  # busy
    del abandoned  # another route raised before this one was finished
    search = worker.submit(_job(py_repo, ("batch", "records")), None)
    assert search is not None
    regions, last = next(search.rounds())
    assert last and regions
    for region in regions:  # the second search's words, not the first one's
        lines = (py_repo / region.path).read_text().splitlines()
        hit = [lines[n - 1] for n in region.hit_lines]
        assert all("batch" in line or "records" in line for line in hit), hit


def test_the_worker_reads_a_file_list_once_per_listing(py_repo, worker):
    listed = [p.relative_to(py_repo).as_posix() for p in py_repo.rglob("*.py")]
    job = _job(py_repo, ("loader", "records"))
    first = worker.submit(job, listed)
    regions = next(first.rounds())[0]
    del first
    again = worker.submit(job, listed)
    assert [(r.path, r.start) for r in next(again.rounds())[0]] == [
        (r.path, r.start) for r in regions
    ]
    assert len(worker._sent) == 1


def test_words_found_nowhere_are_one_empty_round(py_repo, worker):
    search = worker.submit(_job(py_repo, ("zyxwvut", "qqqqq")), None)
    assert next(search.rounds()) == ([], True)
    del search
    assert worker.submit(_job(py_repo, ("batch", "records")), None) is not None


def test_a_one_shot_retrieval_never_starts_the_worker(java_repo, monkeypatch):
    own = WordsWorker()
    monkeypatch.setattr(similar_worker, "_shared", own)
    retriever = Retriever(java_repo)
    where = cursor(
        java_repo, "src/main/java/com/shop/orders/OrderHandler.java", "return", "return "
    )
    retriever.retrieve(**where.kwargs())  # the CLI's one call: no process to start and end
    assert own.pid is None
    retriever.retrieve(**where.kwargs())
    assert own.pid is not None  # a caller that comes back gets it
    own.close()
