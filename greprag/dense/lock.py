"""Crash-safe writes: an exclusive lock file and write-temp-then-rename."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from greprag.config import dense_test_pause_s
from greprag.errors import StorageError


def test_pause() -> None:
    """Sleep ``$GREPRAG_DENSE_TEST_PAUSE_S`` seconds: lets tests kill a writer mid-write."""
    pause = dense_test_pause_s()
    if pause > 0:
        time.sleep(pause)


@contextmanager
def exclusive_lock(path: Path, *, blocking: bool = True) -> Iterator[bool]:
    """Hold ``fcntl.flock(LOCK_EX)`` on ``path``; yields False when busy and not ``blocking``.

    The kernel drops the lock when the holder dies, so a killed indexer never leaves
    the index locked. A lock that cannot be created (read-only cache folder) raises
    ``StorageError`` when ``blocking``, and yields False otherwise.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if blocking:
            raise StorageError(f"cannot lock {path}: {exc.strerror or exc}") from None
        yield False
        return
    try:
        flags = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` through a temp file, fsync, then ``os.replace``: readers see old or new."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            test_pause()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_orphan_temps(folder: Path) -> None:
    """Delete temp files left by killed writers (call only while holding the lock)."""
    for tmp in folder.glob("*.tmp-*"):
        tmp.unlink(missing_ok=True)
