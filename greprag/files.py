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
from pathlib import Path, PurePosixPath

__all__ = [
    "FileCache",
    "decode_text",
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
    real = os.path.realpath(os.path.join(root, clean))
    return Path(real) if _within(str(root), real) else None


def read_bytes(root: Path, path: str, limit: int | None = None) -> bytes | None:
    """The bytes of ``root/path``, or None when it is outside the root, not a regular
    file, unreadable, or (with ``limit``) larger than ``limit`` bytes."""
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
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
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
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text(root: Path, path: str) -> str | None:
    """``read_bytes`` decoded by ``decode_text``, or None."""
    data = read_bytes(root, path)
    return None if data is None else decode_text(data)


class FileCache:
    """Lines of repo files (``split_lines`` of ``read_text``), read once per retrieval;
    a path that resolves outside the repo when it is read gives no lines."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.lines: dict[str, list[str]] = {}
        self._inside: dict[str, bool] = {}

    def get(self, path: str) -> list[str]:
        cached = self.lines.get(path)
        if cached is None:
            cached = split_lines(read_text(self.repo, path) or "")
            self.lines[path] = cached
        return cached

    def allowed(self, path: str) -> bool:
        """``path`` resolves inside the repo now (not a symlink out, no ``..``)."""
        known = self._inside.get(path)
        if known is None:
            known = self._inside[path] = inside(self.repo, path) is not None
        return known
