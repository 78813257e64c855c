"""Docstrings and doc comments of code, as documentation sections.

Definitions come from ``greprag.syntax`` (tree-sitter, or the line analyzers). A Python
definition's docstring is the string that opens its body; a brace language's doc comment
(Javadoc, ``///``, ``//``) sits directly above the signature, inside the span the analyzer
reports. The section runs from the definition's first line to the docstring's last (or to
the signature's end), so it starts where the definition does: a docstring and the code it
documents share one identity in fusion. The breadcrumb is the module, then the enclosing
classes, then the name.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from docs_mode.sections import Piece, Section
from docs_mode.text import source_lines
from greprag.languages import language_for_path
from greprag.syntax import Span, file_spans

__all__ = ["docstring_sections", "module_name"]

_PY_STRING = re.compile(r"""^\s*[rRuUbBfF]{0,2}("{3}|'{3}|"|')""")
MAX_DOC_LINES = 200
# files that stand for their folder: pkg/__init__.py is module pkg
_PACKAGE_FILES = frozenset(
    [("__init__", ".py"), ("mod", ".rs")]
    + [("index", ext) for ext in (".js", ".jsx", ".mjs", ".ts", ".tsx")]
)


def module_name(path: str) -> str:
    """``pkg/sub/mod.py`` → ``pkg.sub.mod`` (``pkg/__init__.py`` → ``pkg``)."""
    pure = PurePosixPath(path)
    parts = list(pure.with_suffix("").parts)
    if parts and (parts[-1], pure.suffix) in _PACKAGE_FILES:
        parts.pop()
    return ".".join(parts) or path


def _python_docstring_end(lines: list[str], first: int) -> int | None:
    """The last line (1-based) of the string literal opening at line ``first``, or None
    when that line does not open one."""
    if first > len(lines):
        return None
    match = _PY_STRING.match(lines[first - 1])
    if match is None:
        return None
    quote = match.group(1)
    rest = lines[first - 1][match.end() :]
    if quote in rest:
        return first
    if len(quote) == 1:
        return None  # a one-quote string spans one line
    for number in range(first + 1, min(len(lines), first + MAX_DOC_LINES) + 1):
        if quote in lines[number - 1]:
            return number
    return None


def _first_code_line(lines: list[str], after: int) -> int:
    number = after + 1
    while number <= len(lines) and not lines[number - 1].strip():
        number += 1
    return number


def _doc_end(span: Span, lines: list[str], python: bool) -> int | None:
    """Where the definition's documentation ends, or None if it has none."""
    if python:
        return _python_docstring_end(lines, _first_code_line(lines, span.header_end_line))
    head = lines[span.start_line - 1 : span.header_end_line]
    if any(line.strip().startswith(("/**", "///", "//!")) for line in head):
        return span.header_end_line
    return None


def _pieces(lines: list[str], start: int, end: int) -> tuple[Piece, ...]:
    """Lines ``start..end`` cut into paragraphs (a piece starts after each blank line)."""
    firsts = [start] + [
        n for n in range(start + 1, end + 1) if lines[n - 1].strip() and not lines[n - 2].strip()
    ]
    stops = [*(n - 1 for n in firsts[1:]), end]
    return tuple(Piece(a, "\n".join(lines[a - 1 : b])) for a, b in zip(firsts, stops, strict=True))


def docstring_sections(path: str, text: str) -> list[Section]:
    """One ``docstring`` section per documented definition (and the module docstring)."""
    lang = language_for_path(path)
    if lang is None or not text.strip():
        return []
    lines = source_lines(text)
    python = lang.name == "python"
    module = module_name(path)
    sections: list[Section] = []
    if python:
        first = _first_code_line(lines, 0)
        end = _python_docstring_end(lines, first)
        if end is not None:
            pieces = _pieces(lines, first, end)
            sections.append(Section(path, first, end, (module,), pieces, "docstring"))
    enclosing: list[Span] = []
    for span in sorted(file_spans(path, text, lang.name), key=lambda s: s.start_line):
        while enclosing and enclosing[-1].end_line < span.start_line:
            enclosing.pop()
        names = [s.name or "?" for s in enclosing]
        enclosing.append(span)
        end = _doc_end(span, lines, python)
        if end is None or end < span.start_line:
            continue
        crumb = (module, *names, span.name or "?")
        pieces = _pieces(lines, span.start_line, end)
        sections.append(Section(path, span.start_line, end, crumb, pieces, "docstring"))
    return sections
