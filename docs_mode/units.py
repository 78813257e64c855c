"""Units of search: documentation sections, docstrings and code definitions of each file.

Docs mode ranks, fuses and packs whole units, never lines: a documentation file is its
sections; a code file is its definitions (the dense index's chunks, so both routes name a
unit the same way) or, when only documentation is wanted, its docstrings. A unit's
identity is ``(path, start_line)``: a docstring starts where its definition does.

``UnitCache`` parses each file once per version (size and mtime) and keeps the result
for the life of a ``Retriever``; with a ``UnitStore`` it first looks for the file's
layout recorded on disk by an earlier process. Files are read through ``greprag.files``
only, and units' text always comes from that read.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from docs_mode.docstrings import docstring_sections, module_name
from docs_mode.profile import DocsProfile, load_profile
from docs_mode.sections import Piece, Section, SectionSizes, format_of, sections_of
from docs_mode.unit_store import StoredUnits, UnitStore, content_digest
from greprag.files import decode_text, read_bytes, split_lines
from greprag.languages import language_for_path

__all__ = ["KINDS", "FileUnits", "SearchKind", "UnitCache", "file_sections", "unit_key"]

SearchKind = Literal["all", "code", "docs"]
KINDS: tuple[str, ...] = ("all", "code", "docs")


def file_sections(path: str, text: str, profile: DocsProfile | None = None) -> list[Section]:
    """The size-bounded sections of a documentation file (the profile's file types)."""
    p = profile or load_profile()
    sizes = SectionSizes(p.min_section_chars, p.max_section_chars)
    return sections_of(path, text, sizes, p.extensions())


def unit_key(path: str, start_line: int) -> tuple[str, int]:
    """The identity of a unit across routes."""
    return (path, start_line)


def definitions(path: str, text: str) -> list[Section]:
    """A code file's units (``greprag.dense.chunks.code_units``) as ``definition`` sections."""
    from greprag.dense.chunks import code_units

    lines = split_lines(text)  # code_units numbers lines as rg does
    module = module_name(path)
    units = []
    for start, end, symbol in code_units(path, text):
        body = "\n".join(lines[start - 1 : end])
        crumb = (module, *symbol.split(".")) if symbol != "<module>" else (module,)
        units.append(Section(path, start, end, crumb, (Piece(start, body),), "definition"))
    return units


class FileUnits:
    """The units of one file, sorted by start line (they never overlap); ``starts`` and
    ``ends`` give their ranges without building them (``StoredUnits`` builds on access)."""

    def __init__(self, units: Sequence[Section] = ()) -> None:
        self.units = units
        if isinstance(units, StoredUnits):
            self.starts, self.ends = units.starts, units.ends
        else:
            self.starts = [u.start_line for u in units]
            self.ends = [u.end_line for u in units]

    def at(self, line: int) -> Section | None:
        """The unit covering ``line``, if any."""
        i = bisect.bisect_right(self.starts, line) - 1
        if i >= 0 and self.ends[i] >= line:
            return self.units[i]
        return None


class UnitCache:
    """Units per (file, kind), parsed once per file version."""

    def __init__(self, repo: Path, profile: DocsProfile, store: UnitStore | None = None) -> None:
        self.repo = repo
        self.profile = profile
        self.store = store
        self.extensions = profile.extensions()
        self._cache: dict[tuple[str, str], tuple[tuple[int, int], FileUnits]] = {}
        self._checked: dict[tuple[str, str], FileUnits] = {}  # fresh within one search
        self._flavors: dict[tuple[str, str], str | None] = {}

    def begin(self) -> None:
        """A new search: each file's version is checked again (once) from now on."""
        self._checked.clear()

    def is_doc(self, path: str) -> bool:
        return format_of(path, self.extensions) is not None

    def is_html(self, path: str) -> bool:
        """An HTML page: its lines hold tags; its sections, the text a browser shows."""
        return format_of(path, self.extensions) == "html"

    def flavor(self, path: str, kind: SearchKind) -> str | None:
        """What ``path`` holds for ``kind``: ``doc`` sections, ``code`` definitions,
        ``docstring`` sections, or None (nothing to search)."""
        known = self._flavors.get((path, kind), "")
        if known != "":
            return known
        if self.is_doc(path):
            flavor = "doc" if kind != "code" else None
        elif language_for_path(path) is None:
            flavor = None
        elif kind == "docs":
            flavor = "docstring" if self.profile.docstrings else None
        else:
            flavor = "code"
        self._flavors[(path, kind)] = flavor
        return flavor

    def searchable(self, path: str, kind: SearchKind) -> bool:
        """Whether ``path`` has units of ``kind``."""
        return self.flavor(path, kind) is not None

    def units(self, path: str, kind: SearchKind) -> FileUnits:
        """The units of ``path`` for ``kind``: sections of a documentation file; the
        definitions of a code file, or its docstrings for ``docs``. Empty for a file that
        cannot be read (outside the repository, gone, not a regular file)."""
        flavor = self.flavor(path, kind) or "code"
        checked = self._checked.get((path, flavor))
        if checked is not None:
            return checked
        try:  # the version only; the read below is checked for containment
            st = os.stat(os.path.join(self.repo, path))
            version = (st.st_mtime_ns, st.st_size)
        except (OSError, ValueError):
            version = (0, -1)
        cached = self._cache.get((path, flavor))
        if cached is not None and cached[0] == version:
            units = cached[1]
        else:
            data = read_bytes(self.repo, path) if version[1] >= 0 else None
            units = FileUnits(self._read(path, flavor, data, version[0]))
            self._cache[(path, flavor)] = (version, units)
        self._checked[(path, flavor)] = units
        return units

    def _read(self, path: str, flavor: str, data: bytes | None, mtime_ns: int) -> Sequence[Section]:
        """The units of ``data`` (the file's bytes as read now): the layout the store
        recorded for exactly these bytes, else parsed (and recorded)."""
        if not data:
            return []
        text = decode_text(data)
        if self.store is None:
            return self._parse(path, text, flavor)
        stamp = (len(data), mtime_ns, content_digest(data))
        stored = self.store.load(path, flavor, stamp, text)
        if stored is not None:
            return stored
        units = self._parse(path, text, flavor)
        self.store.save(path, flavor, stamp, units, split_lines(text))
        return units

    def _parse(self, path: str, text: str, flavor: str) -> list[Section]:
        if flavor == "doc":
            return file_sections(path, text, self.profile)
        if flavor == "docstring":
            return sorted(docstring_sections(path, text), key=lambda s: s.start_line)
        return definitions(path, text)
