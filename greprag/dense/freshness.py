"""Which files the dense index covers, and which of them changed since it was built.

The cheap check is a stat walk: directory mtimes tell whether any file was added,
removed or renamed (only then is the file list re-read with ``rg --files``, which
honors ``.gitignore``), and each file's mtime and size tell whether it may have
changed; a content hash confirms it. Entries stat'ed within ``RACY_NS`` of their
mtime are re-hashed next time (coarse timestamps can hide a quick second write).
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from greprag.files import read_bytes
from greprag.languages import LANGUAGES
from greprag.rg import find_rg
from greprag.rg import list_files as rg_list_files

# code of every known language, and the docs profile's documentation (configs/docs.toml)
DOC_EXTENSIONS = (".md", ".markdown", ".mdx", ".rst", ".rest", ".txt", ".html", ".htm")
INDEXED_EXTENSIONS = frozenset(
    [ext for lang in LANGUAGES.values() for ext in lang.extensions] + list(DOC_EXTENSIONS)
)
MAX_FILE_BYTES = 512_000
MAX_DOC_BYTES = 1 << 20  # a manual's HTML page runs larger (Flask's api.html: 0.9 MB)
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class FileState:
    """What the index knows about one file; ``checked_ns`` is when it was last hashed."""

    mtime_ns: int
    size: int
    sha: str
    checked_ns: int

    @property
    def racy(self) -> bool:
        return self.checked_ns - self.mtime_ns < RACY_NS


@dataclass
class Changes:
    """The difference between the files on disk and an index's file states."""

    changed: dict[str, FileState] = field(default_factory=dict)  # new or edited: new state
    deleted: list[str] = field(default_factory=list)
    touched: dict[str, FileState] = field(default_factory=dict)  # same content, new stat
    dirs: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.changed or self.deleted or self.touched)


def list_files(repo: Path, rg_path: str | None = None) -> list[str]:
    """Indexable files under ``repo`` (repo-relative, ``/``), honoring ignore files."""
    return sorted(
        p
        for p in rg_list_files(find_rg(rg_path), repo)
        if os.path.splitext(p)[1].lower() in INDEXED_EXTENSIONS
    )


def _dir_mtimes(repo: Path, paths: list[str], now_ns: int) -> dict[str, int]:
    """mtimes of every ancestor directory of ``paths``; recently changed ones record -1."""
    dirs = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    mtimes = {}
    for folder in dirs:
        try:
            mtime = os.stat(os.path.join(repo, folder)).st_mtime_ns
        except OSError:
            mtime = -1
        mtimes[folder] = -1 if now_ns - mtime < RACY_NS else mtime
    return mtimes


def _dirs_changed(repo: Path, dirs: dict[str, int]) -> bool:
    if not dirs:
        return True
    for folder, mtime in dirs.items():
        try:
            if os.stat(os.path.join(repo, folder)).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def file_sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def detect_changes(
    repo: Path, files: dict[str, FileState], dirs: dict[str, int], rg_path: str | None = None
) -> Changes:
    """Compare the disk with ``files``; lists the tree only when a directory changed."""
    now = time.time_ns()
    root = Path(os.path.realpath(repo))  # reads are checked against the real root
    relist = _dirs_changed(repo, dirs)
    paths = list_files(repo, rg_path) if relist else sorted(files)
    changes = Changes(dirs=_dir_mtimes(repo, paths, now) if relist else dirs)
    seen = set()
    prefix = os.path.join(repo, "")  # str paths: a stat per file is the whole check
    for path in paths:
        try:
            st = os.stat(prefix + path)
        except OSError:
            continue
        limit = MAX_DOC_BYTES if path.lower().endswith(DOC_EXTENSIONS) else MAX_FILE_BYTES
        if st.st_size > limit:
            continue
        seen.add(path)
        old = files.get(path)
        if old and (old.mtime_ns, old.size) == (st.st_mtime_ns, st.st_size) and not old.racy:
            continue
        data = read_bytes(root, path, MAX_FILE_BYTES)
        if data is None:  # gone, grown past the limit, or now a link out of the repo
            seen.discard(path)
            continue
        sha = file_sha(data)
        state = FileState(st.st_mtime_ns, st.st_size, sha, now)
        if old and old.sha == sha:
            changes.touched[path] = state
        else:
            changes.changed[path] = state
    changes.deleted = sorted(set(files) - seen)
    return changes
