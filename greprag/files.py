"""Reading repository files without ever leaving the root, in one line model.

Every path, whatever its source (rg output, a dense index row, an import, a client),
is checked when it is read, not when it was listed: a file swapped for a symlink to
``/etc/passwd`` after the listing is refused at open time. On Linux the check reads
the path of the opened descriptor itself (``/proc/self/fd``), so no swap between the
check and the read can slip through; elsewhere the real path is checked before opening.

Lines are what rg numbers: text split at ``\n`` only (a form feed, ``\r`` alone or
U+2028 stays inside its line), a trailing ``\r`` dropped. Text is decoded the way rg
reads it: a UTF-16 or UTF-8 byte-order mark is honored (rg transcodes such files), and
any other bytes as UTF-8 with undecodable bytes shown as U+FFFD, never dropped.
"""

from __future__ import annotations

import codecs
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

__all__ = [
    "FileCache",
    "FileStore",
    "LinesMemo",
    "decode_text",
    "file_text",
    "inside",
    "is_binary",
    "read_bytes",
    "read_text",
    "safe_relative",
    "split_lines",
]

_PROC_FD = Path("/proc/self/fd")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def safe_relative(path: str) -> str | None:
    """``path`` as a clean repo-relative POSIX path, or None if it could point outside
    (absolute, ``..``, NUL, empty)."""
    if not path or "\x00" in path or "\\" in path:
        return None
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    clean = pure.as_posix()
    return None if clean in ("", ".") else clean


def _within(root: str, real: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def inside(root: Path, path: str) -> Path | None:
    """The real location of repo-relative ``path`` if it stays under ``root`` (itself a
    real path), else None. Symlinks inside the root that point inside it are fine."""
    clean = safe_relative(path)
    if clean is None:
        return None
    base = str(root)
    joined = os.path.join(base, clean)
    # the root is real, so only the parts below it can be links: one lstat each, where
    # realpath takes one per part of the whole path (about half the time on jdk17 paths)
    current = base
    for part in clean.split("/"):
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            break  # nothing below a missing part: realpath too would keep the rest as is
        if stat.S_ISLNK(mode):
            real = os.path.realpath(joined)
            return Path(real) if _within(base, real) else None
    return Path(joined)


def read_bytes(root: Path, path: str, limit: int | None = None) -> bytes | None:
    """The bytes of ``root/path``, or None when it is outside the root, not a regular
    file, unreadable, or (with ``limit``) larger than ``limit`` bytes."""
    read = _read_with_stat(root, path, limit)
    return None if read is None else read[0]


def _read_with_stat(
    root: Path, path: str, limit: int | None = None
) -> tuple[bytes, os.stat_result] | None:
    """``read_bytes`` and the ``fstat`` of the very descriptor it read."""
    real = inside(root, path)
    if real is None:
        return None
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (limit is not None and info.st_size > limit):
            return None
        if _PROC_FD.is_dir():
            try:
                opened = os.readlink(_PROC_FD / str(fd))
            except OSError:
                return None
            if not _within(str(root), opened):
                return None
        os.set_blocking(fd, True)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), info
    except OSError:
        return None
    finally:
        os.close(fd)


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)
BINARY_SNIFF_BYTES = 8192


def decode_text(data: bytes) -> str:
    """``data`` as rg reads it: a byte-order mark picks UTF-8 or UTF-16 (and is dropped),
    anything else is UTF-8 with undecodable bytes replaced by U+FFFD."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    return data.decode("utf-8", errors="replace")


def is_binary(data: bytes) -> bool:
    """A NUL byte early on (rg's test) in bytes without a UTF-16 byte-order mark."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def split_lines(text: str) -> list[str]:
    """``text`` in rg's lines: split at ``\n`` only, a trailing ``\r`` dropped, no empty
    last line after a final newline. ``str.splitlines`` also splits at form feeds,
    ``\r`` and U+2028, and its line numbers would disagree with rg's."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text(root: Path, path: str) -> str | None:
    """``read_bytes`` decoded by ``decode_text``, or None."""
    data = read_bytes(root, path)
    return None if data is None else decode_text(data)


# A file changed less than this before it was read may change again without its
# timestamps showing it (they tick coarsely: a jiffy on Linux, 2 s on FAT): such an
# entry is re-read and compared on every use until it is older (git's "racy clean").
RACY_NS = 3_000_000_000
# The text a FileStore keeps, least recently used first out. Caches keyed by a file's
# lines (scans, outlines, headers) hold them too, so a store smaller than what those hold
# reads evicted files again into new objects: every cache misses and both copies live.
MAX_STORED_CHARS = 64_000_000


def stat_key(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """What tells a file's versions apart: device, inode, size, mtime and ctime."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled(started_ns: int, key: tuple[int, ...]) -> bool:
    """Whether a read begun at ``started_ns`` of a file with this ``stat_key`` may be
    trusted later on its stat alone: the file had not changed for ``RACY_NS`` (a change
    within the same clock tick can leave the stat as it was)."""
    return started_ns - max(key[3], key[4]) > RACY_NS


@dataclass(frozen=True)
class _Stored:
    key: tuple[int, int, int, int, int]
    lines: tuple[str, ...]  # shared between retrievals; a tuple of str, so the garbage
    # collector stops walking it after one pass (a list is walked by every full collection)
    chars: int
    trusted: bool  # its timestamps were old enough to tell a later change
    plain: bool  # UTF-8 without a byte-order mark, no CR or NUL: rg reads these very lines


class FileStore:
    """Repository files' lines kept across retrievals, each re-read once it changes.

    An entry is used only while ``stat`` still reports the (device, inode, size, mtime,
    ctime) it was read with, and only when that read happened ``RACY_NS`` after its last
    change; otherwise the file is read again (through the containment check) and an
    unchanged content keeps the same ``lines`` object, so caches keyed by it stay valid.
    ``invalidate`` drops entries at once (a file watcher's hook). Thread-safe.
    """

    def __init__(self, repo: Path, max_chars: int = MAX_STORED_CHARS) -> None:
        self.repo = repo
        self.max_chars = max_chars
        self._prefix = str(repo).rstrip(os.sep) + os.sep
        self._entries: OrderedDict[str, _Stored] = OrderedDict()
        self._inside: dict[str, tuple[int, int, int, int, int]] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def _stat(self, path: str) -> tuple[int, int, int, int, int] | None:
        try:
            return stat_key(os.stat(self._prefix + path))
        except (OSError, ValueError):
            return None

    def lines(self, path: str) -> tuple[str, ...] | None:
        """``path``'s lines as they are now; None when it is outside, gone or unreadable."""
        with self._lock:
            entry = self._entries.get(path)
        if entry is not None and entry.trusted and self._stat(path) == entry.key:
            with self._lock:
                if path in self._entries:
                    self._entries.move_to_end(path)
            return entry.lines
        started = time.time_ns()
        read = _read_with_stat(self.repo, path)
        if read is None:
            self.invalidate([path])
            return None
        data, info = read
        text = decode_text(data)
        lines, chars = tuple(split_lines(text)), len(text)
        if entry is not None and entry.lines == lines:  # touched, not changed: keep the object
            lines = entry.lines
        key = stat_key(info)
        plain = not data.startswith(_BOM_PREFIXES) and b"\r" not in data and b"\0" not in data
        self._keep(path, _Stored(key, lines, chars, settled(started, key), plain))
        return lines

    def plain_size(self, path: str, lines: Sequence[str]) -> int | None:
        """The size in bytes of ``path`` when ``lines`` are its lines as last read and it
        is plain text (``_Stored.plain``): what rg searches, line for line; else None."""
        with self._lock:
            entry = self._entries.get(path)
        if entry is None or entry.lines is not lines or not entry.plain:
            return None
        return entry.key[2]

    def _keep(self, path: str, entry: _Stored) -> None:
        with self._lock:
            old = self._entries.pop(path, None)
            self._chars -= old.chars if old else 0
            if entry.chars > self.max_chars:
                return
            self._entries[path] = entry
            self._chars += entry.chars
            while self._chars > self.max_chars:
                _, evicted = self._entries.popitem(last=False)
                self._chars -= evicted.chars

    def half_full(self) -> bool:
        """The lines kept hold half of ``max_chars`` or more (warming stops there)."""
        return self._chars * 2 >= self.max_chars

    def allowed(self, path: str) -> bool:
        """``path`` resolves inside the repo now: known so while its stat is unchanged
        (the same inode, untouched since it was checked), else checked again."""
        before = self._stat(path)
        with self._lock:
            entry = self._entries.get(path)
            known = self._inside.get(path)
        if before is not None and (known == before or (entry and entry.key == before)):
            return True
        if inside(self.repo, path) is None:
            return False
        if before is not None and self._stat(path) == before:
            with self._lock:
                self._inside[path] = before
        return True

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Forget ``paths`` (repo-relative; None: every file)."""
        with self._lock:
            for path in list(self._entries) if paths is None else paths:
                old = self._entries.pop(path, None)
                self._chars -= old.chars if old else 0
                self._inside.pop(path, None)
            if paths is None:
                self._inside.clear()


class FileCache:
    """Lines of repo files (``split_lines`` of ``read_text``), read once per retrieval;
    a path that resolves outside the repo when it is read gives no lines. With a
    ``store``, files unchanged since an earlier retrieval are not read again."""

    def __init__(self, repo: Path, store: FileStore | None = None) -> None:
        self.repo = repo
        self.store = store
        self.lines: dict[str, tuple[str, ...]] = {}
        self._inside: dict[str, bool] = {}

    def get(self, path: str) -> tuple[str, ...]:
        cached = self.lines.get(path)
        if cached is None:
            if self.store is not None:
                cached = self.store.lines(path) or ()
            else:
                cached = tuple(split_lines(read_text(self.repo, path) or ""))
            self.lines[path] = cached
        return cached

    def plain(self, path: str, max_bytes: int) -> tuple[str, ...] | None:
        """``path``'s lines when they are what rg would search, line for line, and the
        file is at most ``max_bytes`` (``FileStore.plain_size``); else None."""
        if self.store is None:
            return None
        lines = self.get(path)
        size = self.store.plain_size(path, lines)
        return lines if size is not None and size <= max_bytes else None

    def allowed(self, path: str) -> bool:
        """``path`` resolves inside the repo now (not a symlink out, no ``..``)."""
        known = self._inside.get(path)
        if known is None:
            if self.store is not None:
                known = self.store.allowed(path)
            else:
                known = inside(self.repo, path) is not None
            self._inside[path] = known
        return known


T = TypeVar("T")


class LinesMemo:
    """Values computed from a file's lines, kept while that very list object is.

    A ``FileStore`` hands out the same list for as long as a file's content is unchanged
    and a new one when it changes, so keying by identity is keying by content, at no
    hashing cost. Each entry holds its list, so an id is never reused while it is kept.
    Least recently used out past ``size`` entries; thread-safe.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, Hashable], tuple[Sequence[str], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def half_full(self) -> bool:
        """Half of ``size`` entries or more are kept (warming stops there)."""
        return len(self._items) * 2 >= self.size

    def full(self) -> bool:
        """``size`` entries are kept: another pushes the least recently used out."""
        return len(self._items) >= self.size

    def peek(self, lines: Sequence[str], tag: Hashable) -> Any:
        """The value kept for (``lines``, ``tag``); None when there is none."""
        with self._lock:
            hit = self._items.get((id(lines), tag))
            if hit is None or hit[0] is not lines:
                return None
            self._items.move_to_end((id(lines), tag))
            return hit[1]

    def get(self, lines: Sequence[str], tag: Hashable, compute: Callable[[], T]) -> T:
        """The value for (``lines``, ``tag``), computed by ``compute()`` on a miss."""
        key = (id(lines), tag)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] is lines:
                self._items.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._items[key] = (lines, value)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


_TEXTS = LinesMemo(256)


def file_text(lines: Sequence[str]) -> str:
    """``lines`` joined by ``\n``: the same string object while ``lines`` is kept (so
    caches keyed by the text hash it once)."""
    return _TEXTS.get(lines, "text", lambda: "\n".join(lines))
