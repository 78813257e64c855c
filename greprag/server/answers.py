"""Answers kept between identical requests, served only while the files they quote are
unchanged.

An editor asks again and again about the same cursor; recomputing costs a full rg pass.
An answer is kept with the (inode, size, mtime) of every file it quotes and of the file
under the cursor, and served again only if each still matches: text that is no longer in
a file never comes back. Files whose mtime is not safely older than the computation are
not trusted (a write in the same clock tick leaves the stat unchanged), so such answers
are not kept. Other files may change what an answer *should* be (a new definition
elsewhere): the watcher clears the cache on every batch of changes (``clear``), and an
answer computed across a clear is not kept.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AnswerCache"]

RACY_S = 1.0  # a file modified less than this before the computation began is not trusted
Stamp = tuple[int, int, int]


def _stamp(root: Path, path: str) -> Stamp | None:
    try:
        st = os.stat(root / path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class _Entry:
    payload: dict[str, Any]
    stamps: tuple[tuple[str, Stamp], ...]


class AnswerCache:
    """A bounded LRU of answers for one root, valid while their files' stats match
    (``size`` 0 keeps none)."""

    def __init__(self, root: Path, size: int = 512) -> None:
        self.root = root
        self.size = size
        self.generation = 0
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def begin(self) -> tuple[int, float]:
        """A token to pass to ``put``: the generation and the time a computation began."""
        return self.generation, time.time()

    def get(self, key: Hashable) -> dict[str, Any] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is not None and all(_stamp(self.root, p) == s for p, s in entry.stamps):
            self.hits += 1
            return entry.payload
        if entry is not None:
            with self._lock:
                self._entries.pop(key, None)
        self.misses += 1
        return None

    def put(
        self, key: Hashable, payload: dict[str, Any], paths: Iterable[str], begun: tuple[int, float]
    ) -> bool:
        """Keep ``payload`` (quoting ``paths``) unless the cache was cleared since ``begun``
        or a file changed too recently to trust its stat; True when kept."""
        generation, started = begun
        if self.size < 1:
            return False
        stamps = []
        for path in sorted(set(paths)):
            stamp = _stamp(self.root, path)
            if stamp is None or stamp[2] / 1e9 > started - RACY_S:
                return False
            stamps.append((path, stamp))
        with self._lock:
            if generation != self.generation:
                return False
            self._entries[key] = _Entry(payload, tuple(stamps))
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return True

    def clear(self) -> None:
        """Forget every answer (files changed somewhere under the root)."""
        with self._lock:
            self.generation += 1
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
