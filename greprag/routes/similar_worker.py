"""The similar route's rg pass and ranking in a process of their own.

Once rg is done, a retrieval's Python runs on one core: the similar route's parsing and
ranking (its thread) and the grep route's attribution, rerank and packing (the calling
thread) share one interpreter. In a worker process the first runs beside the second.

One worker serves every similar route of the process, one search at a time: a search that
finds it busy, not started yet or gone runs in its own thread as before, with the same
result. A route asks for it from its second search on (a one-shot caller such as the CLI
never starts it; searches run in threads while it starts), and it ends when its parent
does (its socket closes). Messages are pickles over a socket pair between this process
and its own child: nothing else can write to them.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from greprag.cursor_file import CursorFile
from greprag.errors import SearchError
from greprag.rg import SearchSpec, run_words
from greprag.routes.child import start_child
from greprag.routes.similar_index import Occurrences
from greprag.routes.similar_rank import Region, Round, Term, ranked_rounds

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = [
    "RemoteSearch",
    "WordsJob",
    "WordsWorker",
    "WorkerGone",
    "job_rounds",
    "serve",
    "shared_worker",
]

_KEPT_LISTINGS = 8  # file lists the worker keeps, so a list is sent once per listing
_SERVE = "import sys; from greprag.routes.similar_worker import serve; serve(int(sys.argv[1]))"
_REPLY_SLACK = 5.0  # seconds past the rg timeout before the worker counts as gone
_EXIT_WAIT = 0.05  # seconds an idle worker takes to leave once its socket is closed


class WorkerGone(Exception):
    """The worker failed or ended; the search runs in the calling process instead."""


@dataclass(frozen=True)
class WordsJob:
    """One similar search: the rg pass (``spec``; its file list by ``listing`` key, 0 when
    rg walks the repository) and what the ranking needs (``ranked_rounds``'s arguments)."""

    rg: str
    repo: str
    spec: SearchSpec
    listing: int
    searched: int
    terms: tuple[Term, ...]
    current: CursorFile
    folder: str | None
    timeout: float


def job_rounds(job: WordsJob, held: Occurrences | None = None) -> Iterator[Round]:
    """The job's rg pass ranked into rounds of regions (``ranked_rounds``), in the worker
    or in the route's own thread alike; ``SearchError`` when the pass fails. The worker
    passes its index (``held``), which answers instead of rg once it holds the files."""
    found = held.answer(job.repo, job.spec) if held is not None else None
    if found is None:
        found = run_words(Path(job.rg), Path(job.repo), job.spec, job.timeout)
    searched = max(job.searched, len(found), 1)
    return ranked_rounds(list(job.terms), found, searched, job.current, job.folder)


def _encoded(job_id: int, round_: Round, indexed: bool) -> tuple:
    regions, last = round_
    return (
        "round",
        job_id,
        [(r.path, r.start, r.end, r.hit_lines, r.score) for r in regions],
        last,
        indexed,
    )


def serve(fd: int) -> None:
    """The worker's loop: answer each job with its first round of regions, each ``next``
    with the following one, each ``settle`` once every queued file is read, until the
    parent closes the socket. Between messages it reads the files its index still lacks."""
    from multiprocessing.connection import Connection, wait

    conn = Connection(fd)
    conn.send(("ready",))
    listings: OrderedDict[int, tuple[str, ...]] = OrderedDict()
    held = Occurrences()
    rounds: Iterator[Round] | None = None
    current, indexed = 0, False
    while True:
        try:
            if held.busy():
                reading = held.waiting()
                ready = wait([conn, reading] if reading else [conn], None if reading else 0)
                if conn not in ready:
                    held.work()
                    continue
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "job":
            _, current, job, listed = message
            if listed is not None:
                listings[job.listing] = listed
                while len(listings) > _KEPT_LISTINGS:
                    listings.popitem(last=False)
            rounds = None
            try:
                if job.listing:
                    job = replace(job, spec=replace(job.spec, paths=listings[job.listing]))
                answered = held.answered
                rounds = job_rounds(job, held)
                indexed = held.answered > answered
                reply = _encoded(current, next(rounds, ([], True)), indexed)  # no file: no region
            except SearchError as exc:
                reply = ("search-error", current, str(exc))
            except Exception as exc:  # the parent runs the search itself, and sees it there
                reply = ("failed", current, repr(exc))
        elif message[0] == "settle":
            deadline = time.monotonic() + message[2]
            while held.busy() and time.monotonic() < deadline:
                held.work(timeout=max(deadline - time.monotonic(), 0.0))
            reply = ("settled" if not held.busy() else "reading", message[1], held.stats())
        elif rounds is not None and message[1] == current:
            reply = _encoded(current, next(rounds, ([], True)), indexed)
        else:
            reply = ("failed", message[1], "no such search")
        conn.send(reply)


class WordsWorker:
    """The parent's side: starts the worker, sends it jobs, reads its rounds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._process: subprocess.Popen | None = None
        self._ready = False
        self._gone = False
        self._busy = 0  # the job in flight (0: none)
        self._jobs = 0
        # file lists sent, by identity (the list is held, so its id is not reused)
        self._sent: OrderedDict[int, tuple[list[str], int]] = OrderedDict()
        # per repository: whether the last search was answered by the index (no rg ran)
        self.indexed: dict[str, bool] = {}

    def submit(self, job: WordsJob, listed: list[str] | None) -> RemoteSearch | None:
        """Send ``job`` (``listed``: the files its pass reads, or None when rg walks the
        repository); None when the worker cannot take it now."""
        with self._lock:
            if self._gone or self._busy or not self._usable():
                return None
            self._jobs += 1
            job_id = self._jobs
            payload = None
            if listed is not None:
                held = self._sent.get(id(listed))
                if held is None:
                    held = self._sent[id(listed)] = (listed, job_id)
                    payload = tuple(listed)
                    while len(self._sent) > _KEPT_LISTINGS:
                        self._sent.popitem(last=False)
                job = replace(job, listing=held[1])
            try:
                self._conn.send(("job", job_id, job, payload))
            except (OSError, ValueError):
                self._fail()
                return None
            self._busy = job_id
        return RemoteSearch(self, job_id, job.repo, job.timeout + _REPLY_SLACK)

    def settle(self, timeout: float = 120.0) -> dict[str, int] | None:
        """Wait until the worker has read every file its index has queued (a benchmark
        or a warm server calls this after its first searches), then its index's
        ``Occurrences.stats``; None when it is not running, busy, or did not finish in
        ``timeout`` seconds."""
        if not self.ready(timeout):
            return None
        with self._lock:
            if self._gone or self._busy:
                return None
            self._jobs += 1
            job_id = self._busy = self._jobs
        try:
            self._send(("settle", job_id, timeout))
            reply = self._receive(job_id, timeout + _REPLY_SLACK)
        except WorkerGone:
            return None
        finally:
            self._release(job_id)
        return reply[2] if reply[0] == "settled" else None

    @property
    def pid(self) -> int | None:
        """The worker's process id (None before it is started)."""
        return self._process.pid if self._process is not None else None

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether the worker takes jobs, waiting up to ``timeout`` seconds for it to
        start (it is started by the first call)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if self._gone:
                    return False
                if self._usable():
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def _usable(self) -> bool:
        """Whether the worker has said it is ready; starts it on first call."""
        if self._ready:
            return True
        if self._conn is None:
            self._start()
            return False
        try:
            if self._conn.poll(0):
                self._ready = self._conn.recv() == ("ready",)
        except (EOFError, OSError):
            self._fail()
        return self._ready

    def _start(self) -> None:
        started = start_child(_SERVE)
        if started is None:
            self._gone = True
            return
        self._process, self._conn = started

    def _fail(self) -> None:
        """The worker is gone for good: searches run in their own threads from now on."""
        self._gone, self._busy = True, 0
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._conn is not None:
            self._conn.close()

    def _send(self, message: tuple) -> None:
        try:
            self._conn.send(message)
        except (OSError, ValueError, AttributeError):
            self._gone_now("the worker cannot be reached")

    def _receive(self, job_id: int, timeout: float) -> tuple:
        """The worker's reply to ``job_id`` (replies to abandoned jobs are skipped)."""
        while True:
            try:
                if not self._conn.poll(timeout):
                    self._gone_now("the worker did not answer in time")
                reply = self._conn.recv()
            except (EOFError, OSError, AttributeError):
                self._gone_now("the worker ended")
            if reply[1] == job_id:
                return reply

    def _gone_now(self, why: str) -> None:
        with self._lock:
            self._fail()
        raise WorkerGone(why)

    def _release(self, job_id: int) -> None:
        with self._lock:
            if self._busy == job_id:
                self._busy = 0

    def close(self) -> None:
        """End the worker: an idle one reads the end of its socket and leaves; one still
        starting or searching is killed (an exit never waits for it)."""
        with self._lock:
            self._gone, self._busy = True, 0
            if self._conn is not None:
                self._conn.close()
            if self._process is not None:
                try:
                    self._process.wait(timeout=_EXIT_WAIT)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()


class RemoteSearch:
    """One job sent to the worker: its rounds, read as the route asks for them."""

    def __init__(self, worker: WordsWorker, job_id: int, repo: str, timeout: float) -> None:
        self._worker = worker
        self._job_id = job_id
        self._repo = repo
        self._timeout = timeout
        # a search never finished (another route raised) frees the worker when dropped
        self._done = weakref.finalize(self, worker._release, job_id)

    def rounds(self) -> Iterator[Round]:
        """The rounds of regions, as ``ranked_rounds`` gives them. The first raises
        ``SearchError`` for a failed rg pass and ``WorkerGone`` when the search has to run
        here instead; a later round that cannot come ends the rounds (the regions so far
        stand)."""
        worker, job_id = self._worker, self._job_id
        try:
            reply = worker._receive(job_id, self._timeout)
            while True:
                if reply[0] == "search-error":
                    raise SearchError(reply[2])
                if reply[0] != "round":
                    raise WorkerGone(reply[2])
                worker.indexed[self._repo] = reply[4]
                yield [Region(*fields) for fields in reply[2]], reply[3]
                if reply[3]:
                    return
                try:
                    worker._send(("next", job_id))
                    reply = worker._receive(job_id, self._timeout)
                except WorkerGone:
                    return
        finally:
            self._done()


_shared: WordsWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> WordsWorker | None:
    """The process's worker (started on its first job); None where a child process cannot
    be handed a socket (not POSIX)."""
    global _shared
    if os.name != "posix":
        return None
    with _shared_lock:
        if _shared is None:
            _shared = WordsWorker()
            atexit.register(_shared.close)
        return _shared


def _forget_after_fork() -> None:
    """A forked child starts its own worker: its parent's worker and socket are not its
    own to use or end."""
    global _shared
    if _shared is not None:
        _shared._process, _shared._gone = None, True
    _shared = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
