"""reStructuredText sections (and plain text, which reads the same), line by line.

Titles are found by their adornment: a line of one repeated punctuation character under
the title (and, optionally, the same above it); as in docutils, a title's level is the
order in which its style first appears in the file. Labels (``.. _name:``) and one-line
targets such as Django's ``.. setting:: NAME`` directly above a title belong to its
section. API directives (``.. function::``, ``.. class::``, ``.. method::``, ``.. py:...``
and the like) are entries of their own that end where their indented body ends; a
``.. method::`` indented inside a ``.. class::`` is an entry nested in the class's.

A new piece starts at a paragraph at the section's own indentation after a blank line, so
literal blocks, ``code-block`` bodies and other indented blocks stay whole. No docutils:
its line numbers are approximate, and Sphinx's directives and roles are unknown to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docs_mode.sections import Section, SectionBuilder
from docs_mode.text import source_lines
from greprag.languages import words

__all__ = ["ENTRY_DIRECTIVES", "rst_sections"]

# Directives that describe one API object (the Python, C, C++, JavaScript and standard
# domains of Sphinx); a domain prefix such as ``py:`` is allowed.
ENTRY_DIRECTIVES = words(
    """
    function class method attribute data exception decorator decoratormethod classmethod
    staticmethod property module-function describe option envvar confval type member
    macro var struct enum enumerator
    """
)
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:[\w-]+:)?([\w-]+)::(.*)$")
_TARGET = re.compile(r"^\.\.\s+(?:_[^:]*:|[\w-]+::)")
MAX_TITLE = 100


@dataclass(frozen=True)
class _Title:
    start: int  # 0-based first line (a label above it, or the overline, or the title)
    line: int  # 0-based title line
    end: int  # 0-based last line (the underline)
    depth: int
    text: str


_ROLE = re.compile(r":[\w:.+-]+:`([^`]*)`")


def _plain(title: str) -> str:
    """A title without inline markup: ``:func:`x``` → ``x``, ````code```` → ``code``."""
    return " ".join(_ROLE.sub(r"\1", title).replace("`", "").replace("*", "").split())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_adornment(line: str) -> bool:
    return bool(_ADORNMENT.match(line))


def _titles(lines: list[str]) -> dict[int, _Title]:
    """Titles by their first line (0-based), each with its depth."""
    styles: list[tuple[str, bool]] = []
    found: list[tuple[int, int, int, str, tuple[str, bool]]] = []
    i = 0
    while i < len(lines) - 1:
        line, below = lines[i], lines[i + 1]
        over = (
            _is_adornment(line)
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and not _is_adornment(lines[i + 1])
            and _is_adornment(lines[i + 2])
            and lines[i + 2].strip()[0] == line.strip()[0]
        )
        if over:
            found.append((i, i + 1, i + 2, lines[i + 1].strip(), (line.strip()[0], True)))
            i += 3
            continue
        under = (
            line.strip()
            and not line[0].isspace()
            and not _is_adornment(line)
            and not line.startswith("..")
            and _is_adornment(below)
            and len(below.rstrip()) >= min(len(line.rstrip()), 4)
            and (i == 0 or not lines[i - 1].strip())
        )
        if under:
            found.append((i, i, i + 1, line.strip(), (below.strip()[0], False)))
            i += 2
            continue
        i += 1
    titles: dict[int, _Title] = {}
    for start, line, end, text, style in found:
        if style not in styles:
            styles.append(style)
        start = _targets_above(lines, start)
        titles[start] = _Title(start, line, end, styles.index(style) + 1, _plain(text)[:MAX_TITLE])
    return titles


def _targets_above(lines: list[str], start: int) -> int:
    """The first line of the labels and one-line targets right above a title."""
    first = start
    i = start - 1
    while i >= 0:
        if not lines[i].strip():
            i -= 1
            continue
        if _TARGET.match(lines[i]) and (i + 1 >= len(lines) or not lines[i + 1][:1].isspace()):
            first = i
            i -= 1
            continue
        break
    return first


def rst_sections(path: str, text: str) -> list[Section]:
    """The sections of a reStructuredText (or plain text) file, with 1-based line ranges."""
    lines = source_lines(text)
    titles = _titles(lines)
    builder = SectionBuilder(path, lines)
    entries: list[tuple[int, int | None]] = []  # (directive indent, body indent)
    previous_blank = True
    skip_to = -1
    for i, line in enumerate(lines):
        if i <= skip_to:
            continue
        number = i + 1
        title = titles.get(i)
        if title is not None:
            entries.clear()
            builder.heading(number, title.depth, title.text)
            builder.piece(number)
            skip_to, previous_blank = title.end, False
            continue
        if not line.strip():
            previous_blank = True
            continue
        indent = _indent(line)
        while entries and indent <= entries[-1][0]:
            entries.pop()
            builder.end_entry(number)
            previous_blank = True  # what follows an entry starts a piece
        directive = _DIRECTIVE.match(line)
        if directive and directive.group(2) in ENTRY_DIRECTIVES:
            signature = " ".join(directive.group(3).split()) or directive.group(2)
            builder.entry(number, signature[:MAX_TITLE])
            builder.piece(number)
            entries.append((indent, None))
            previous_blank = False
            continue
        if entries and entries[-1][1] is None:
            entries[-1] = (entries[-1][0], indent)  # the entry's body indentation
        base = entries[-1][1] if entries else 0
        if (previous_blank and indent <= (base or 0)) or not builder.has_pieces:
            builder.piece(number)
        previous_blank = False
    return builder.finish(len(lines))
