"""A persistent record of each file's unit layout, so a one-shot search parses only what
changed since some earlier process parsed it.

Parsing is the slow part of a cold ``greprag search`` (a reST reader or tree-sitter per
file rg hit; seconds on a large manual). ``UnitStore`` keeps, per (file, flavor), one
small JSON entry under ``<cache root>/docs-units/<repo>/``: the file's size, mtime and
content hash, and the layout of its units (line ranges, breadcrumb, kind, anchor, and
each piece as a line range). The entry holds no text: a unit's text is rebuilt from the
file as it is now (read through ``greprag.files`` by the caller), and an entry is used
only when the size, mtime and hash of those very bytes match it and every range fits
them. Files whose pieces are not plain line ranges (HTML shows text, not source) are not
stored. Entries are written atomically; a damaged, stale or foreign entry is ignored and
rewritten. ``fingerprint`` names the parser (its sources, the profile's section sizes
and file types, the parser packages' files): a change starts a fresh folder, and the
first write there removes the repository's folders of other fingerprints.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Sequence
from contextlib import suppress
from functools import lru_cache
from importlib.util import find_spec
from itertools import chain
from operator import le, lt
from pathlib import Path
from typing import Any

from docs_mode.profile import DocsProfile
from docs_mode.sections import Piece, Section
from greprag.files import split_lines

__all__ = [
    "STORE_VERSION",
    "StoredUnits",
    "UnitStore",
    "content_digest",
    "line_count",
    "parser_fingerprint",
]

STORE_VERSION = 1
_KINDS = {"section", "summary", "entry", "docstring", "definition"}
_PARSER_SOURCES = (
    "docs_mode/sections.py",
    "docs_mode/markdown.py",
    "docs_mode/rst.py",
    "docs_mode/docstrings.py",
    "docs_mode/text.py",
    "docs_mode/units.py",
    "greprag/dense/chunks.py",
    "greprag/files.py",
    "greprag/languages.py",
    "greprag/syntax",  # every module: definitions' spans come from there
)
_PARSER_PACKAGES = ("tree_sitter", "markdown_it")


def content_digest(data: bytes) -> str:
    """The hash an entry is keyed by."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _package_stamp(name: str) -> str:
    try:
        spec = find_spec(name)
        st = os.stat(spec.origin) if spec and spec.origin else None
    except (ImportError, OSError, ValueError):
        st = None
    return f"{name}:{st.st_size}:{st.st_mtime_ns}" if st else f"{name}:-"


@lru_cache(maxsize=8)
def parser_fingerprint(profile: DocsProfile) -> str:
    """What the layout of a file's units depends on besides the file itself."""
    from greprag.syntax.grammars import GRAMMARS

    digest = hashlib.blake2b(digest_size=12)
    top = Path(__file__).resolve().parent.parent
    for name in _PARSER_SOURCES:
        source = top / name
        for file in sorted(source.glob("*.py")) if source.is_dir() else [source]:
            try:
                digest.update(file.read_bytes())
            except OSError:
                digest.update(name.encode())
    packages = (*_PARSER_PACKAGES, *sorted({g.module for g in GRAMMARS.values()}))
    stamps = [_package_stamp(name) for name in packages]
    sizes = (profile.min_section_chars, profile.max_section_chars, profile.docstrings)
    digest.update(repr((STORE_VERSION, sizes, sorted(profile.extensions().items()))).encode())
    digest.update("\n".join(stamps).encode())
    return digest.hexdigest()


def _piece_stop(piece: Piece, lines: Sequence[str]) -> int | None:
    """The last line of ``piece`` when its text is exactly ``lines[line - 1 : stop]``."""
    stops = [piece.line + piece.text.count("\n")]
    if not piece.text:
        stops.append(piece.line - 1)  # an empty range
    for stop in stops:
        if "\n".join(lines[piece.line - 1 : stop]) == piece.text:
            return stop
    return None


def _columns(sections: Sequence[Section], lines: Sequence[str]) -> dict[str, list[Any]] | None:
    """The sections without their text, one list per field (pieces as flat ``first, last``
    line pairs); None when some piece is not a line range of ``lines``."""
    pieces = []
    for s in sections:
        bounds = []
        for piece in s.pieces:
            stop = _piece_stop(piece, lines)
            if stop is None:
                return None
            bounds += (piece.line, stop)
        pieces.append(bounds)
    return {
        "starts": [s.start_line for s in sections],
        "ends": [s.end_line for s in sections],
        "crumbs": ["\0".join(s.breadcrumb) for s in sections],
        "kinds": [s.kind for s in sections],
        "anchors": [s.anchor for s in sections],
        "pieces": pieces,
    }


def _of_types(values: list[Any], *types: type) -> bool:
    return set(map(type, values)) <= set(types)


def _fits(columns: dict[str, Any], count: int) -> bool:
    """Columns of the right types whose line numbers fit a file of ``count`` lines, units
    in order and apart: nothing built from them can fail or reach past the file."""
    starts, ends, pieces = columns["starts"], columns["ends"], columns["pieces"]
    fields = (starts, ends, columns["crumbs"], columns["kinds"], columns["anchors"], pieces)
    if not _of_types(list(fields), list) or len(set(map(len, fields))) > 1:
        return False
    if not starts:
        return True
    flat = list(chain.from_iterable(pieces)) if _of_types(pieces, list) else [None]
    return (
        _of_types(starts, int)
        and _of_types(ends, int)
        and _of_types(flat, int)
        and _of_types(columns["crumbs"], str)
        and _of_types(columns["anchors"], str, type(None))
        and set(columns["kinds"]) <= _KINDS
        and starts[0] >= 1
        and ends[-1] <= count
        and all(map(le, starts, ends))
        and all(map(lt, ends, starts[1:]))
        and all(pieces)
        and not any(len(bounds) % 2 for bounds in pieces)
        and min(flat) >= 0
        and max(flat) <= count
    )


class StoredUnits(Sequence[Section]):
    """A file's sections from checked columns, each built (its text taken from the
    file's current text) when first asked for: a search reads few units of a file."""

    def __init__(self, path: str, columns: dict[str, list[Any]], text: str) -> None:
        self.path = path
        self.starts: list[int] = columns["starts"]
        self.ends: list[int] = columns["ends"]
        self._columns = columns
        self._text = text
        self._lines: list[str] | None = None
        self._built: list[Section | None] = [None] * len(self.starts)

    def __len__(self) -> int:
        return len(self._built)

    def __getitem__(self, i: int) -> Section:  # type: ignore[override]
        built = self._built[i]
        if built is None:
            if self._lines is None:
                self._lines = split_lines(self._text)
            lines, c = self._lines, self._columns
            bounds = c["pieces"][i]
            pieces = tuple(
                Piece(first, "\n".join(lines[first - 1 : stop]))
                for first, stop in zip(bounds[::2], bounds[1::2], strict=True)
            )
            crumb = c["crumbs"][i]
            built = Section(
                self.path,
                self.starts[i],
                self.ends[i],
                tuple(crumb.split("\0")) if crumb else (),
                pieces,
                c["kinds"][i],
                c["anchors"][i],
            )
            self._built[i] = built
        return built


def line_count(text: str) -> int:
    """``len(split_lines(text))`` without splitting."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


class UnitStore:
    """Unit layouts of one repository's files on disk (see the module docstring)."""

    def __init__(self, cache: Path, repo: Path, profile: DocsProfile) -> None:
        repo_key = hashlib.blake2b(str(repo).encode(), digest_size=10).hexdigest()
        self.folder = cache / "docs-units" / repo_key / parser_fingerprint(profile)
        self._prefix = f"{self.folder}{os.sep}"

    def _entry(self, path: str, flavor: str) -> str:
        name = hashlib.blake2b(f"{flavor}\0{path}".encode(), digest_size=16).hexdigest()
        return f"{self._prefix}{name}.json"

    def load(
        self, path: str, flavor: str, stamp: tuple[int, int, str], text: str
    ) -> StoredUnits | None:
        """The units of ``path`` whose current bytes have ``stamp`` (size, mtime_ns,
        digest) and decode to ``text``; None when no entry fits them."""
        try:
            with open(self._entry(path, flavor), "rb") as handle:
                entry = json.loads(handle.read())
            if entry["key"] != [path, flavor, *stamp] or not _fits(entry, line_count(text)):
                return None
            return StoredUnits(path, entry, text)
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            return None

    def _drop_older(self) -> None:
        """Remove this repository's records made by another parser version (their
        fingerprint folders): none of them can be used again."""
        for folder in self.folder.parent.glob("*"):
            if folder != self.folder and folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)

    def save(
        self,
        path: str,
        flavor: str,
        stamp: tuple[int, int, str],
        sections: Sequence[Section],
        lines: Sequence[str],
    ) -> None:
        """Record the layout of ``sections`` (parsed from bytes with ``stamp``); nothing
        when a piece is not a line range or the cache folder cannot be written."""
        columns = _columns(sections, lines)
        if columns is None:
            return
        data = json.dumps({"key": [path, flavor, *stamp], **columns}).encode()
        target = self._entry(path, flavor)
        tmp = f"{target}.tmp-{os.getpid()}-{threading.get_ident()}"
        try:
            if not self.folder.is_dir():
                self._drop_older()
                self.folder.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except OSError:
            with suppress(OSError):
                os.unlink(tmp)
