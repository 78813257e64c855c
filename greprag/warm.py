"""Idle-time warming of what a retrieval computes per file, for a long-lived Retriever.

A retrieval that reaches a file for the first time reads it, scans its syntax, finds
its definition headers, parses a Java class's skeleton, counts its lines' tokens and
splits them into BM25's: on jdk17 that was ~10 ms of the calling thread's ~45 per
retrieval. ``CacheWarmer`` does it ahead, in one thread, for the files the language's
search lists, while no retrieval runs: it waits while one is in flight in the process
(``retrieving``: any retriever's, as a workspace runs several side by side) and sleeps
a moment between steps, so a retrieval waits at most for the step in hand, never for
the interpreter's 5 ms switch. Each cache keeps half its room for the retrievals' own
files (whole files' skeletons and BM25 tokens are warming's alone, up to their memos'
size); the thread ends when the list is done.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import pairwise

from greprag.fusion.bm25 import tokens_ahead, tokens_room
from greprag.fusion.pack import headers_ahead
from greprag.syntax.analysis import spans_language
from greprag.syntax.outline import outlines_ahead
from greprag.syntax.scan import scan_ahead
from greprag.tokens import count_ahead, piece_starts

__all__ = ["CacheWarmer"]

STEP_LINES = 128  # lines counted per step (~0.5 ms): a retrieval waits at most for one
PAUSE_S = 0.0005  # between steps: a retrieval's thread takes the interpreter then
_CACHES = ("scan", "headers", "outlines", "tokens", "bm25")

LinesOf = Callable[[str], Sequence[str] | None]


class _InFlight:
    """The retrievals running in this process, whichever retriever runs them (a
    workspace's run side by side): every warmer waits while there is one."""

    def __init__(self) -> None:
        self.count = 0
        self.cond = threading.Condition()


_IN_FLIGHT = _InFlight()


def _retrieval_in_flight() -> bool:
    """Whether a retrieval runs now: a long parse of the warming's gives up then."""
    return _IN_FLIGHT.count > 0


class CacheWarmer:
    """Warms the per-file caches of ``lines_of``'s files (``warm``) while no retrieval runs;
    ``full`` says when the store behind ``lines_of`` has no room left for warming."""

    def __init__(
        self, lines_of: LinesOf, encoding: str, full: Callable[[], bool] = lambda: False
    ) -> None:
        self._lines_of = lines_of
        self._store_full = full  # the store behind ``lines_of`` has no room left for warming
        self._encoding = encoding
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._cond = _IN_FLIGHT.cond  # one lock for the queue and the retrievals in flight
        self._thread: threading.Thread | None = None
        self._full: set[str] = set()  # the caches whose share for warming is used up

    @staticmethod
    @contextmanager
    def retrieving() -> Iterator[None]:
        """Mark a retrieval in flight: every warmer in the process waits until none is."""
        with _IN_FLIGHT.cond:
            _IN_FLIGHT.count += 1
        try:
            yield
        finally:
            with _IN_FLIGHT.cond:
                _IN_FLIGHT.count -= 1
                _IN_FLIGHT.cond.notify_all()

    def warm(self, paths: Sequence[str]) -> None:
        """Queue ``paths`` (repo-relative, as ``lines_of`` takes them) not queued before,
        and start the thread if it is not running."""
        with self._cond:
            fresh = [p for p in paths if p not in self._queued]
            if not fresh:
                return
            self._queued.update(fresh)
            self._queue.extend(fresh)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="greprag-warm", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the queued files to be warm; whether they are."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._thread is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def _run(self) -> None:
        try:
            while (path := self._next()) is not None:
                self._warm_file(path)
        except BaseException:
            self._stop()
            raise

    def _next(self) -> str | None:
        """The next file once no retrieval runs; None (the thread then ends) when none
        is left or every cache's share is full."""
        with self._cond:
            while _IN_FLIGHT.count and self._queue:
                self._cond.wait()
            if self._queue and len(self._full) < len(_CACHES) and not self._store_full():
                return self._queue.popleft()
            self._ended()
            return None

    def _stop(self) -> None:
        with self._cond:
            self._ended()

    def _ended(self) -> None:
        """The thread's state reset as it ends (the lock held): a later ``warm`` starts
        another."""
        self._queue.clear()
        self._thread = None
        self._cond.notify_all()

    def _idle(self) -> None:
        """Pause a moment, then wait while a retrieval runs."""
        time.sleep(PAUSE_S)
        with self._cond:
            while _IN_FLIGHT.count:
                self._cond.wait()

    def _warm_file(self, path: str) -> None:
        """One file's lines, then its scan, headers, skeleton, token counts and BM25
        tokens, a step at a time, each until its cache's share for warming is full
        (``_full``)."""
        lines = self._lines_of(path)
        if not lines:
            return
        lang = spans_language(path, None)
        if "scan" not in self._full and lang is not None and not scan_ahead(lines, lang):
            self._full.add("scan")
        if "headers" not in self._full and not headers_ahead(lines):
            self._full.add("headers")
        # its parse gives way to a retrieval itself; no pause before it (nothing to parse
        # in most languages)
        if "outlines" not in self._full and not outlines_ahead(path, lines, _retrieval_in_flight):
            self._full.add("outlines")
        if "tokens" not in self._full:
            starts = piece_starts(lines, STEP_LINES)
            for low, high in pairwise([*starts, len(lines)]):
                self._idle()
                if not count_ahead(lines[low:high], self._encoding):
                    self._full.add("tokens")
                    break
        if "bm25" not in self._full and not tokens_room():
            self._full.add("bm25")
        if "bm25" not in self._full:
            for _ in tokens_ahead(lines, STEP_LINES):
                self._idle()
        self._idle()
