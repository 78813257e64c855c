"""Word occurrences held in the similar route's worker, so a warm search reads no file.

The similar route's rg pass reads every file of the cursor's language for ~16 words; on a
big repository it costs as much as the grep route's own pass, and both share two cores.
The worker has each listed file read once, between searches, and keeps every whole-word
occurrence (ASCII word characters, as ``--no-unicode --word-regexp`` sees them) by word.
A search then gathers its words' occurrences instead of running rg, with the same answer
``run_words`` gives (``--max-count``: the first matching lines of each file, every word on
them in line order; listed files are read whatever their size, as rg reads them).

The reading (seconds of CPU on a large repository, once) runs in a child process at idle
priority (``read_batches``), which takes only the CPU the retrievals leave, and sends the
postings back in batches; where it cannot start, the worker reads a file at a time itself.

Never stale: each search stats its listed files and reads again any whose stat changed,
or that changed within ``RACY_NS`` of being read (as ``FileStore`` does; a few small
ones inline; more, and rg answers while they are read again). rg answers too while the
index is being built, for words that are not plain ASCII words, for files it
could not read as rg does (a NUL byte: rg calls them binary; a UTF-16 byte-order mark),
and for repositories past the memory cap.
"""

from __future__ import annotations

import os
import re
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice, pairwise
from typing import TYPE_CHECKING

from greprag.files import settled, stat_key
from greprag.rg import FileWords, SearchSpec
from greprag.routes.child import start_child

if TYPE_CHECKING:
    import subprocess
    from multiprocessing.connection import Connection

    import numpy as np

__all__ = ["FileRead", "OccurrenceIndex", "Occurrences", "read_batches", "read_file"]

MAX_POSTINGS = 8_000_000  # per repository (~64 MB of arrays): past it rg answers
MAX_INDEXES = 2  # repositories indexed at once in one worker
IDLE_EVICT_S = 120.0  # an index unused this long gives way to another repository
INLINE_REREADS = 32  # changed files a search reads again itself; more: rg, then catch up
INLINE_REREAD_BYTES = 256 << 10  # and at most this much of them (a rebuilt bundle: rg)
READ_BATCH = 32  # files the reader child reads and sends back at once
_READ = (
    "import sys; from greprag.routes.similar_index import read_batches; "
    "read_batches(int(sys.argv[1]))"
)
_WORD = re.compile(rb"\w+")  # bytes: ASCII letters, digits and underscore only
_PLAIN_WORD = re.compile(r"\w+", re.ASCII)
_FILE_BITS, _LINE_BITS, _COLUMN_BITS = 22, 22, 20  # one posting: file, line, word on it
_LINE_SHIFT = _COLUMN_BITS
_FILE_SHIFT = _LINE_BITS + _COLUMN_BITS
_LINE_MASK = (1 << _LINE_BITS) - 1
_MAX_FILES = 1 << (_FILE_BITS - 2)  # room for files read again before a rebuild
_SLACK = 100_000  # stale postings or file numbers tolerated before a rebuild
_UNREADABLE = -1  # a file rg reads differently (binary, UTF-16): rg answers searches of it
_ABSENT = -2  # a listed file that could not be read: nothing found there
_Held = tuple[int, tuple[int, ...] | None, bool]  # file number, ``stat_key``, trusted


@dataclass
class OccurrenceIndex:
    """One repository's occurrences: a posting per whole word (file number, line, its
    place on the line, packed in 64 bits), appended per word as files are read (a search
    sorts what it gathers). A file read again gets a new number; its old postings stay
    until the index is rebuilt, left out as no listed file's."""

    repo: str
    postings: dict[bytes, array] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  # by file number
    current: dict[str, _Held] = field(default_factory=dict)  # by path
    pending: dict[str, None] = field(default_factory=dict)  # paths to read, in order
    inflight: dict[str, int] = field(default_factory=dict)  # being read, under this number
    counts: dict[int, int] = field(default_factory=dict)  # postings per live file number
    size: int = 0  # postings held, live or not
    live: int = 0
    used: float = field(default_factory=time.monotonic)

    def read(self, path: str) -> None:
        """Read ``path`` (again) into the index here and now."""
        self.accept(read_file(self.repo, path, self.claim(path), self.postings))

    def claim(self, path: str) -> int:
        """A new file number for reading ``path`` (again); a read under an older number
        that comes back later is left out (``accept``)."""
        self.pending.pop(path, None)
        number = self.inflight[path] = len(self.paths)
        self.paths.append(path)
        return number

    def take(self, count: int) -> list[tuple[str, int]]:
        """Up to ``count`` waiting files, each with the number to read it under."""
        return [(path, self.claim(path)) for path in list(islice(self.pending, count))]

    def merge(self, postings: dict[bytes, array], reads: list[FileRead]) -> None:
        """A batch read elsewhere: its postings, then its files."""
        held = self.postings
        for word, found in postings.items():
            mine = held.get(word)
            if mine is None:
                held[word] = found
            else:
                mine.extend(found)
        for read in reads:
            self.accept(read)

    def accept(self, read: FileRead) -> None:
        """A file read under ``read.number``, whose postings are in; a read superseded
        by a later one only counts as stale postings."""
        self.size += read.count
        if self.inflight.get(read.path) != read.number:
            return
        del self.inflight[read.path]
        self._drop(read.path)
        self.current[read.path] = (read.state, read.key, read.trusted)
        if read.state >= 0:
            self.live += read.count
            self.counts[read.state] = read.count

    def _drop(self, path: str) -> None:
        held = self.current.pop(path, None)
        if held is not None:
            self.live -= self.counts.pop(held[0], 0)

    def survey(self, paths: Sequence[str]) -> tuple[list[str], list[str], int]:
        """The listed files never read, those that may have changed since they were read
        (their stat differs, gone or back included, or they were read too soon after a
        change to trust the stat), and the bytes of the latter."""
        unread, changed, size = [], [], 0
        current, prefix = self.current, self.repo + os.sep
        for path in paths:
            held = current.get(path)
            if held is None:
                unread.append(path)
                continue
            try:
                key: tuple[int, ...] | None = stat_key(os.stat(prefix + path))
            except OSError:
                key = None
            if held[1] != key or not held[2]:
                changed.append(path)
                size += key[2] if key is not None else 0
        return unread, changed, size

    def occurrences(self, spec: SearchSpec) -> list[FileWords] | None:
        """``run_words``'s answer for ``spec`` from the index (every listed file read and
        current); None when a listed file is one rg reads differently."""
        import numpy as np  # in the worker only: a one-shot retrieval never loads it

        numbers = []
        for path in spec.paths:
            number = self.current[path][0]
            if number == _UNREADABLE:
                return None
            if number != _ABSENT:
                numbers.append(number)
        mask = np.zeros(len(self.paths), dtype=bool)
        mask[numbers] = True
        parts, terms = [], []
        for term, word in enumerate(spec.patterns):
            held = self.postings.get(word.encode("ascii"))
            if held:
                parts.append(np.frombuffer(held, dtype=np.uint64))
                terms.append(np.full(len(held), term, dtype=np.uint16))
        if not parts:
            return []
        posting, term = np.concatenate(parts), np.concatenate(terms)
        number = (posting >> np.uint64(_FILE_SHIFT)).astype(np.int64)
        wanted = mask[number]
        posting, term, number = posting[wanted], term[wanted], number[wanted]
        order = np.argsort(posting, kind="stable")
        posting, term, number = posting[order], term[order], number[order]
        posting, term, number = _first_lines(posting, term, number, spec.max_count_per_file)
        if spec.max_per_word:
            posting, term, number = _first_per_word(posting, term, number, spec.max_per_word)
        return _file_words(posting, term, number, self.paths)


def _first_lines(
    posting: np.ndarray, term: np.ndarray, number: np.ndarray, per_file: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted postings cut to each file's first ``per_file`` lines (rg's ``--max-count``)."""
    import numpy as np

    line_key = posting >> np.uint64(_LINE_SHIFT)
    new_line = np.ones(len(posting), dtype=bool)
    new_line[1:] = line_key[1:] != line_key[:-1]
    new_file = np.ones(len(posting), dtype=bool)
    new_file[1:] = number[1:] != number[:-1]
    ordinal = np.cumsum(new_line)  # which distinct line, counted over all files
    first = np.maximum.accumulate(np.where(new_file, ordinal, 0))
    kept = ordinal - first < per_file
    return posting[kept], term[kept], number[kept]


def _first_per_word(
    posting: np.ndarray, term: np.ndarray, number: np.ndarray, per_word: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted postings cut to each word's first ``per_word`` occurrences per file (as
    ``rg.run_words`` cuts them)."""
    import numpy as np

    group = number * (int(term.max(initial=0)) + 1) + term  # one per file and word
    order = np.argsort(group, kind="stable")  # each group's postings in their order
    grouped = group[order]
    at = np.arange(len(grouped))
    new_group = np.ones(len(grouped), dtype=bool)
    new_group[1:] = grouped[1:] != grouped[:-1]
    rank = np.empty(len(grouped), dtype=np.int64)
    rank[order] = at - np.maximum.accumulate(np.where(new_group, at, 0))
    kept = rank < per_word
    return posting[kept], term[kept], number[kept]


def _file_words(
    posting: np.ndarray, term: np.ndarray, number: np.ndarray, paths: list[str]
) -> list[FileWords]:
    """Sorted postings as ``FileWords``, one per file."""
    import numpy as np

    if not len(posting):
        return []
    new_file = np.ones(len(posting), dtype=bool)
    new_file[1:] = number[1:] != number[:-1]
    lines = ((posting >> np.uint64(_LINE_SHIFT)) & np.uint64(_LINE_MASK)).astype(np.int64)
    lines_list, terms_list, numbers = lines.tolist(), term.tolist(), number.tolist()
    starts = [*np.flatnonzero(new_file).tolist(), len(lines_list)]
    return [
        FileWords(paths[numbers[a]], lines_list[a:b], terms_list[a:b]) for a, b in pairwise(starts)
    ]


@dataclass(frozen=True)
class FileRead:
    """One file read under ``number``: ``state`` is that number, ``_UNREADABLE`` or
    ``_ABSENT``; ``count`` postings went in (none but stale ones unless ``state`` is the
    number)."""

    path: str
    number: int
    state: int
    key: tuple[int, ...] | None  # ``stat_key``
    started: int  # time_ns when the reading began
    count: int

    @property
    def trusted(self) -> bool:
        """Whether the file had not changed for ``RACY_NS`` when read (else its stat
        cannot tell a change in the same clock tick, and it is read again)."""
        return self.key is None or settled(self.started, self.key)


def read_file(repo: str, path: str, number: int, postings: dict[bytes, array]) -> FileRead:
    """Read ``repo``/``path``, appending its words' postings under ``number`` to
    ``postings``. A file that cannot be read counts as gone (rg, given it, finds nothing
    there); one rg reads differently, or past the packing's bounds, as unreadable."""
    started, full = time.time_ns(), repo + os.sep + path
    try:
        info = os.stat(full)
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError:
        return FileRead(path, number, _ABSENT, None, started, 0)
    key = stat_key(info)
    if b"\0" in data or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return FileRead(path, number, _UNREADABLE, key, started, 0)
    count = 0
    for line_number, line in enumerate(data.split(b"\n"), 1):
        found = _WORD.findall(line)
        if not found:
            continue
        if line_number > _LINE_MASK or len(found) >= 1 << _COLUMN_BITS:
            return FileRead(path, number, _UNREADABLE, key, started, count)
        base = (number << _FILE_SHIFT) | (line_number << _LINE_SHIFT)
        for column, word in enumerate(found):
            held = postings.get(word)
            if held is None:
                held = postings[word] = array("Q")
            held.append(base | column)
        count += len(found)
    return FileRead(path, number, number, key, started, count)


def read_batches(fd: int) -> None:
    """The reader child's loop: lower its priority, then read each batch of files it is
    sent into postings and send them back, until the worker closes the socket."""
    from multiprocessing.connection import Connection

    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux
        os.nice(19)
    conn = Connection(fd)
    while True:
        try:
            repo, items = conn.recv()
        except (EOFError, OSError):
            return
        postings: dict[bytes, array] = {}
        reads = [read_file(repo, path, number, postings) for path, number in items]
        try:
            conn.send((postings, reads))
        except OSError:  # the worker is gone
            return


class _Reader:
    """The worker's side of the reader child: one batch out at a time."""

    def __init__(self, process: subprocess.Popen, conn: Connection) -> None:
        self.process, self.conn = process, conn
        self.out: tuple[OccurrenceIndex, list[tuple[str, int]]] | None = None

    def send(self, index: OccurrenceIndex) -> None:
        items = index.take(READ_BATCH)
        self.conn.send((index.repo, items))
        self.out = (index, items)

    def close(self) -> None:
        """End the child without waiting for it (an idle-priority process may wait for
        a core to exit; ``subprocess`` reaps it later)."""
        self.conn.close()
        self.process.kill()


class Occurrences:
    """The worker's indexes, one per repository (at most ``MAX_INDEXES``), read while the
    worker has nothing else to do."""

    def __init__(self, reader: bool = True) -> None:
        self._indexes: dict[str, OccurrenceIndex] = {}
        self._too_big: set[str] = set()
        self._reader: _Reader | None = None
        self._read_here = not reader  # no reader child: files are read in this process
        self.answered = 0  # searches answered from an index

    def stats(self) -> dict[str, int]:
        """Searches answered, and the files and postings held."""
        held = self._indexes.values()
        return {
            "answered": self.answered,
            "files": sum(len(i.current) for i in held),
            "postings": sum(i.size for i in held),
        }

    def answer(self, repo: str, spec: SearchSpec) -> list[FileWords] | None:
        """``run_words``'s answer from the repository's index, or None (rg answers; the
        listed files not read yet are queued for ``work``)."""
        if not spec.paths or not all(_PLAIN_WORD.fullmatch(p) for p in spec.patterns):
            return None
        index = self._index(repo)
        if index is None:
            return None
        index.used = time.monotonic()
        unread, changed, size = index.survey(spec.paths)
        if unread or len(changed) > INLINE_REREADS or size > INLINE_REREAD_BYTES:
            queued = (p for p in unread + changed if p not in index.inflight)
            index.pending.update(dict.fromkeys(queued))
            return None
        for path in changed:
            index.read(path)
        self._check_size(index)
        if repo not in self._indexes:
            return None
        found = index.occurrences(spec)
        self.answered += found is not None
        return found

    def busy(self) -> bool:
        """Whether files wait to be read, or are being read."""
        return any(i.pending or i.inflight for i in self._indexes.values())

    def waiting(self) -> Connection | None:
        """The reader child's connection while a batch is out (the worker waits on it
        beside its own)."""
        reader = self._reader
        return reader.conn if reader is not None and reader.out is not None else None

    def work(self, timeout: float = 0.0) -> None:
        """Read what waits: send the reader child a batch, or take one back (waiting up
        to ``timeout`` seconds for it); without the child, read one file here."""
        waits = next((i for i in self._indexes.values() if i.pending), None)
        reader = self._reader_now()
        if reader is None:
            if waits is not None:
                waits.read(next(iter(waits.pending)))
                self._check_size(waits)
            return
        try:
            if reader.out is None:
                if waits is not None:
                    reader.send(waits)
                return
            if not reader.conn.poll(timeout):
                return
            postings, reads = reader.conn.recv()
        except (EOFError, OSError, ValueError):
            self._reader_gone()
            return
        index, _ = reader.out
        reader.out = None
        if self._indexes.get(index.repo) is index:
            index.merge(postings, reads)
            self._check_size(index)
        if not self.busy():  # all read: the child goes until more is to be read
            self._reader = None
            reader.close()

    def _reader_now(self) -> _Reader | None:
        """The reader child, started on first need; None where files are read here."""
        if self._reader is None and not self._read_here:
            started = start_child(_READ)
            if started is None:
                self._read_here = True
            else:
                self._reader = _Reader(*started)
        return self._reader

    def _reader_gone(self) -> None:
        """The child failed: what it was reading waits again, and is read here."""
        reader, self._reader, self._read_here = self._reader, None, True
        if reader.out is not None:
            index, items = reader.out
            for path, number in items:
                if index.inflight.get(path) == number:
                    del index.inflight[path]
                    index.pending[path] = None
        reader.close()

    def _index(self, repo: str) -> OccurrenceIndex | None:
        index = self._indexes.get(repo)
        if index is not None or repo in self._too_big:
            return index
        if len(self._indexes) >= MAX_INDEXES:
            idle = min(self._indexes.values(), key=lambda i: i.used)
            if time.monotonic() - idle.used < IDLE_EVICT_S:
                return None
            del self._indexes[idle.repo]
        index = self._indexes[repo] = OccurrenceIndex(repo)
        return index

    def _check_size(self, index: OccurrenceIndex) -> None:
        """Past the cap, drop the index (rg answers from now on); with as many stale
        postings as live ones, read every file again into a fresh index."""
        if index.live > MAX_POSTINGS or len(index.current) >= _MAX_FILES:
            del self._indexes[index.repo]
            self._too_big.add(index.repo)
        elif max(index.size - 2 * index.live, len(index.paths) - 2 * len(index.current)) > _SLACK:
            fresh = self._indexes[index.repo] = OccurrenceIndex(index.repo)
            fresh.pending = dict.fromkeys([*index.current, *index.pending, *index.inflight])
