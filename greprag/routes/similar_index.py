"""Word occurrences held in the similar route's worker, so a warm search reads no file.

The similar route's rg pass reads every file of the cursor's language for ~16 words; on a
big repository it costs as much as the grep route's own pass, and both share two cores.
The worker, idle between searches, reads each listed file once and keeps every whole-word
occurrence (ASCII word characters, as ``--no-unicode --word-regexp`` sees them) by word.
A search then gathers its words' occurrences instead of running rg, with the same answer
``run_words`` gives (``--max-count``: the first matching lines of each file, every word on
them in line order; listed files are read whatever their size, as rg reads them).

Never stale: each search stats its listed files and reads again any whose stat changed,
or that changed within ``RACY_NS`` of being read (as ``FileStore`` does; a few small
ones inline; more, and rg answers while the worker catches up). rg answers
too while the index is being built, for words that are not plain ASCII words, for files it
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
from itertools import pairwise
from typing import TYPE_CHECKING

from greprag.files import RACY_NS, stat_key
from greprag.rg import FileWords, SearchSpec

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OccurrenceIndex", "Occurrences"]

MAX_POSTINGS = 8_000_000  # per repository (~64 MB of arrays): past it rg answers
MAX_INDEXES = 2  # repositories indexed at once in one worker
IDLE_EVICT_S = 120.0  # an index unused this long gives way to another repository
INLINE_REREADS = 32  # changed files a search reads again itself; more: rg, then catch up
INLINE_REREAD_BYTES = 256 << 10  # and at most this much of them (a rebuilt bundle: rg)
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
    place on the line, packed in 64 bits), appended by word in reading order, so each
    word's array is ascending. A file read again gets a new number; its old postings stay
    until the index is rebuilt, left out as no listed file's."""

    repo: str
    postings: dict[bytes, array] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  # by file number
    current: dict[str, _Held] = field(default_factory=dict)  # by path
    pending: dict[str, None] = field(default_factory=dict)  # paths to read, in order
    counts: dict[int, int] = field(default_factory=dict)  # postings per live file number
    size: int = 0  # postings held, live or not
    live: int = 0
    used: float = field(default_factory=time.monotonic)

    def read(self, path: str) -> None:
        """Read ``path`` (again) into the index; a file that cannot be read counts as
        gone (rg, given it, finds nothing there)."""
        self.pending.pop(path, None)
        self._drop(path)
        started, full = time.time_ns(), self.repo + os.sep + path
        try:
            info = os.stat(full)
            with open(full, "rb") as handle:
                data = handle.read()
        except OSError:
            self.current[path] = (_ABSENT, None, True)
            return
        key = stat_key(info)
        trusted = started - max(info.st_mtime_ns, info.st_ctime_ns) > RACY_NS
        if b"\0" in data or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            self.current[path] = (_UNREADABLE, key, trusted)
            return
        number = len(self.paths)
        self.paths.append(path)
        self.current[path] = (number, key, trusted)
        postings, count = self.postings, 0
        for line_number, line in enumerate(data.split(b"\n"), 1):
            found = _WORD.findall(line)
            if not found:
                continue
            if line_number > _LINE_MASK or len(found) >= 1 << _COLUMN_BITS:
                self.size += count  # held until a rebuild, like a file read again
                self._drop(path)
                self.current[path] = (_UNREADABLE, key, trusted)
                return
            base = (number << _FILE_SHIFT) | (line_number << _LINE_SHIFT)
            for column, word in enumerate(found):
                held = postings.get(word)
                if held is None:
                    held = postings[word] = array("Q")
                held.append(base | column)
            count += len(found)
        self.size += count
        self.live += count
        self.counts[number] = count

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
        return _first_lines(posting, term, number, spec.max_count_per_file, self.paths)


def _first_lines(
    posting: np.ndarray, term: np.ndarray, number: np.ndarray, per_file: int, paths: list[str]
) -> list[FileWords]:
    """Sorted postings cut to each file's first ``per_file`` lines, as ``FileWords``."""
    import numpy as np

    if not len(posting):
        return []
    line_key = posting >> np.uint64(_LINE_SHIFT)
    new_line = np.ones(len(posting), dtype=bool)
    new_line[1:] = line_key[1:] != line_key[:-1]
    new_file = np.ones(len(posting), dtype=bool)
    new_file[1:] = number[1:] != number[:-1]
    ordinal = np.cumsum(new_line)  # which distinct line, counted over all files
    first = np.maximum.accumulate(np.where(new_file, ordinal, 0))
    kept = ordinal - first < per_file
    posting, term, number, new_file = posting[kept], term[kept], number[kept], new_file[kept]
    lines = ((posting >> np.uint64(_LINE_SHIFT)) & np.uint64(_LINE_MASK)).astype(np.int64)
    lines_list, terms_list, numbers = lines.tolist(), term.tolist(), number.tolist()
    starts = [*np.flatnonzero(new_file).tolist(), len(lines_list)]
    return [
        FileWords(paths[numbers[a]], lines_list[a:b], terms_list[a:b]) for a, b in pairwise(starts)
    ]


class Occurrences:
    """The worker's indexes, one per repository (at most ``MAX_INDEXES``), read while the
    worker has nothing else to do."""

    def __init__(self) -> None:
        self._indexes: dict[str, OccurrenceIndex] = {}
        self._too_big: set[str] = set()
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
            index.pending.update(dict.fromkeys(unread + changed))
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
        """Whether files wait to be read."""
        return any(index.pending for index in self._indexes.values())

    def work(self) -> None:
        """Read one waiting file (the worker calls this between messages)."""
        for index in self._indexes.values():
            if index.pending:
                index.read(next(iter(index.pending)))
                self._check_size(index)
                return

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
            fresh.pending = dict.fromkeys([*index.current, *index.pending])
