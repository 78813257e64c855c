"""Sections of prose: the unit docs mode searches, cites and packs.

A ``Section`` is a contiguous line range of one file with its heading path (the
breadcrumb), its kind (a plain ``section``, an API ``entry`` such as ``.. function::`` or a
Sphinx ``<dt id=...>``, a code ``docstring``, a code ``definition``), for HTML the anchor a
browser opens, and its ``pieces``: the paragraphs, lists, tables and whole code fences it
is made of, each with its first source line. A section is only ever split between pieces,
so a code fence is never cut.

Each format has its own reader (``markdown``, ``rst``, ``html``, ``docstrings``); they
describe a file to a ``SectionBuilder`` (headings, entries, pieces) and ``bound_sizes``
then merges small sections and splits huge ones, the way docs servers bound their chunks.
``sections_of`` dispatches by file extension.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

__all__ = [
    "Piece",
    "Section",
    "SectionBuilder",
    "SectionKind",
    "SectionSizes",
    "bound_sizes",
    "format_of",
    "sections_of",
]

SectionKind = Literal["section", "summary", "entry", "docstring", "definition"]


@dataclass(frozen=True)
class Piece:
    """One block of a section (paragraph, list, table, code fence, heading) from its first
    source line; the text is the source (Markdown, reST, code) or, for HTML, the text the
    page shows."""

    line: int
    text: str


@dataclass(frozen=True)
class Section:
    """A contiguous, 1-based inclusive line range of ``path`` and what it says."""

    path: str
    start_line: int
    end_line: int
    breadcrumb: tuple[str, ...]
    pieces: tuple[Piece, ...]
    kind: SectionKind = "section"
    anchor: str | None = None

    @cached_property
    def text(self) -> str:
        return "\n".join(piece.text for piece in self.pieces)

    @property
    def title(self) -> str:
        return self.breadcrumb[-1] if self.breadcrumb else ""

    @property
    def target(self) -> str:
        """Where a reader opens it: ``file#anchor`` for HTML, else ``path:start-end``."""
        if self.anchor:
            return f"{self.path}#{self.anchor}"
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class SectionSizes:
    """Sections under ``min_chars`` merge with the next one under the same parent; sections
    over ``max_chars`` split at their pieces (a single piece is never cut)."""

    min_chars: int = 500
    max_chars: int = 4000


class SectionBuilder:
    """Collects what a reader finds (headings, entries, pieces) into contiguous sections.

    ``heading`` starts a section at a depth; ``entry`` starts an API entry nested under the
    current headings, which ``end_entry`` closes (text after it continues the enclosing
    section as a new range with the same breadcrumb). Pieces given without text take the
    source lines up to the next piece (so a section's text is exactly its lines).
    """

    def __init__(self, path: str, lines: Sequence[str], root: str = "", start: int = 1) -> None:
        self.path = path
        self.lines = lines
        self.trail: list[tuple[int, str, str | None]] = []  # (depth, title, anchor)
        self.entries: list[tuple[str, str | None]] = []  # open entries, outermost first
        self.sections: list[Section] = []
        self.root = root
        self._start = start
        self._kind: SectionKind = "section"
        self._crumb: tuple[str, ...] = (root,) if root else ()
        self._anchor: str | None = None
        self._pieces: list[tuple[int, str | None]] = []

    @property
    def has_pieces(self) -> bool:
        """The open section has a piece already."""
        return bool(self._pieces)

    def _close(self, next_line: int) -> None:
        # minified HTML puts several sections on one line: each keeps that line
        end = next_line - 1 if next_line > self._start else self._start
        if self._pieces and end >= self._start:
            pieces = []
            for i, (line, text) in enumerate(self._pieces):
                if text is None:
                    stop = self._pieces[i + 1][0] - 1 if i + 1 < len(self._pieces) else end
                    text = "\n".join(self.lines[line - 1 : stop])
                pieces.append(Piece(line, text))
            if any(p.text.strip() for p in pieces):
                self.sections.append(
                    Section(
                        self.path,
                        self._start,
                        end,
                        self._crumb,
                        tuple(pieces),
                        self._kind,
                        self._anchor,
                    )
                )
        self._pieces = []
        self._start = next_line

    def _open(self, line: int, kind: SectionKind, anchor: str | None) -> None:
        self._close(line)
        headings = tuple(title for _, title, _ in self.trail)
        entries = tuple(title for title, _ in self.entries)
        self._crumb = tuple(
            t for t in ((self.root,) if self.root else ()) + headings + entries if t
        )
        self._kind = kind
        self._anchor = anchor

    def _heading_anchor(self) -> str | None:
        return next((anchor for _, _, anchor in reversed(self.trail) if anchor), None)

    def heading(self, line: int, depth: int, title: str, anchor: str | None = None) -> None:
        """A heading of ``depth`` (1 = top) at ``line`` starts a section."""
        self.entries.clear()
        self.trail = [t for t in self.trail if t[0] < depth]
        self.trail.append((depth, title.strip(), anchor))
        self._open(line, "section", anchor or self._heading_anchor())

    def entry(self, line: int, title: str, anchor: str | None = None) -> None:
        """An API entry (``.. function::``, ``<dt id=...>``) starts at ``line``."""
        self.entries.append((title.strip(), anchor))
        self._open(line, "entry", anchor or self._heading_anchor())

    def end_entry(self, next_line: int) -> None:
        """The innermost entry ends before ``next_line``; what follows continues its parent."""
        if not self.entries:
            return
        self.entries.pop()
        if self.entries:
            self._open(next_line, "entry", self.entries[-1][1] or self._heading_anchor())
        else:
            self._open(next_line, "section", self._heading_anchor())

    def piece(self, line: int, text: str | None = None) -> None:
        """A block starting at ``line`` (its source lines, unless ``text`` is given)."""
        if line < self._start:
            return
        if not self._pieces or self._pieces[-1][0] < line:
            self._pieces.append((line, text))
        elif text is not None:  # two texts from one source line (HTML): keep both
            previous = self._pieces[-1][1] or ""
            self._pieces[-1] = (line, f"{previous}\n{text}" if previous else text)

    def finish(self, last_line: int) -> list[Section]:
        """The sections, the last one ending at ``last_line``."""
        self._close(last_line + 1)
        return self.sections


def _size(section: Section) -> int:
    return sum(len(piece.text) + 1 for piece in section.pieces)


def _split(section: Section, max_chars: int) -> list[Section]:
    """``section`` in consecutive parts of at most ``max_chars`` (a bigger piece stays
    whole), each keeping the breadcrumb, kind and anchor."""
    groups: list[list[Piece]] = [[]]
    used = 0
    for piece in section.pieces:
        size = len(piece.text) + 1
        if groups[-1] and used + size > max_chars:
            groups.append([])
            used = 0
        groups[-1].append(piece)
        used += size
    if len(groups) == 1:
        return [section]
    parts = []
    for i, group in enumerate(groups):
        end = groups[i + 1][0].line - 1 if i + 1 < len(groups) else section.end_line
        parts.append(replace(section, start_line=group[0].line, end_line=end, pieces=tuple(group)))
    return parts


def _same_parent(a: Section, b: Section) -> bool:
    """``b`` is a sibling of ``a`` or sits below ``a``'s parent heading."""
    parent = a.breadcrumb[:-1]
    return b.breadcrumb[: len(parent)] == parent


def _mergeable(a: Section, b: Section, sizes: SectionSizes) -> bool:
    return (
        a.kind == b.kind
        and a.kind in ("section", "summary")
        and a.end_line + 1 == b.start_line
        and _same_parent(a, b)
        and _size(a) + _size(b) <= sizes.max_chars
    )


def _joined(a: Section, b: Section) -> Section:
    """``a`` and the section right after it as one; two siblings are labelled by their
    parent, a heading and what sits below it by the heading."""
    crumb = a.breadcrumb or b.breadcrumb  # a preamble takes the title that follows it
    if b.breadcrumb[: len(crumb)] != crumb and len(crumb) > 1:
        crumb = crumb[:-1]
    return replace(a, end_line=b.end_line, pieces=a.pieces + b.pieces, breadcrumb=crumb)


def bound_sizes(sections: list[Section], sizes: SectionSizes) -> list[Section]:
    """Split sections over ``sizes.max_chars`` at their pieces, then merge a plain section
    (or member summary) under ``sizes.min_chars`` into the next one of its kind under the
    same parent (into the previous one when it is the last). API entries and docstrings
    are never merged: each is what a question about that API should find."""
    parts = [part for section in sections for part in _split(section, sizes.max_chars)]
    merged: list[Section] = []
    for section in parts:
        if (
            merged
            and _size(merged[-1]) < sizes.min_chars
            and _mergeable(merged[-1], section, sizes)
        ):
            section = _joined(merged.pop(), section)
        merged.append(section)
    last_small = len(merged) > 1 and _size(merged[-1]) < sizes.min_chars
    if last_small and _mergeable(merged[-2], merged[-1], sizes):
        tail = merged.pop()
        merged[-1] = _joined(merged[-1], tail)
    return merged


Reader = Callable[[str, str], list[Section]]

_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".rest": "rst",
    ".txt": "rst",
    ".html": "html",
    ".htm": "html",
}


def format_of(path: str, extensions: dict[str, str] | None = None) -> str | None:
    """``markdown``, ``rst`` or ``html`` for a documentation file, else None. Plain text
    (``.txt``) reads as reStructuredText: its conventions (underlined titles, paragraphs
    between blank lines) are plain text's own."""
    table = _FORMATS if extensions is None else extensions
    return table.get(os.path.splitext(path)[1].lower())


def _reader(name: str) -> Reader:
    if name == "markdown":
        from docs_mode.markdown import markdown_sections

        return markdown_sections
    if name == "rst":
        from docs_mode.rst import rst_sections

        return rst_sections
    from docs_mode.html import html_sections

    return html_sections


def sections_of(
    path: str,
    text: str,
    sizes: SectionSizes | None = None,
    extensions: dict[str, str] | None = None,
) -> list[Section]:
    """The size-bounded sections of a documentation file (empty for other files)."""
    name = format_of(path, extensions)
    if name is None or not text.strip() or "\0" in text[:8192]:
        return []
    return bound_sizes(_reader(name)(path, text), sizes or SectionSizes())
