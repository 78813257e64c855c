"""A Python class's members by indentation: what a class outline needs, without a parse.

The packer outlines a class that does not fit whole (header, docstring line, member
signatures). Parsing the class with tree-sitter for that costs milliseconds per class
on a long one, several times a retrieval; the indentation scan of ``scan.py`` already
knows where each member starts and ends. ``class_analysis`` gives the class's spans as
tree-sitter's analysis would (the class, its members with their decorators and the line
that ends their signature, the statements of its body and of nested classes' bodies), or
None where the text is too irregular to be sure; the caller then parses. How often both
give the same outline on real code is pinned by ``tests/comparison``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from greprag.languages import STRING_LITERAL_RE
from greprag.syntax.scan import (
    _BARE_STRING,
    _PY_CLASS,
    _PY_HEADER,
    _closes,
    _goes_on,
    _py_unit_end,
    _PyScan,
    _string_tail,
    python_scan,
    statement_last,
)
from greprag.syntax.spans import Analysis, Span, sorted_spans

__all__ = ["class_analysis", "units_analysis"]

_NAME = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")
_OPENERS = "([{"
_MAX_HEADER_LINES = 60  # a signature over more lines is left to the parser


class _Unsure(Exception):
    """The scan cannot tell a span as tree-sitter would: parse instead."""


def class_analysis(
    lines: Sequence[str], start: int, end: int
) -> tuple[str, Analysis] | Literal[False] | None:
    """Lines [start, end] of a Python file, joined, and the spans of the class they are
    (decorators, then its header at the first code line; 1-based, relative to
    ``start``), as ``region_analysis`` gives them; False when no class surely ends
    where they do (they hold the class and more, or cut an indented one short: such a
    class is only ever outlined from its whole file), None when unsure. The file's scan
    is the one widening made, kept per file content."""
    first, last = start - 1, end - 1
    scan = python_scan(lines)
    text = _scannable(scan, first, last)
    if text is None:
        return None
    head = next(
        (
            n
            for n in range(first, last + 1)
            if scan.code[n] and not lines[n].lstrip().startswith("@")
        ),
        None,
    )
    if head is None or scan.in_string[first] or not _PY_CLASS.match(lines[head]):
        return None
    defs: list[Span] = []
    stmts: list[Span] = []
    try:
        unit_end = _definition(scan, first, head, defs, stmts)
    except _Unsure:
        return None
    if unit_end > last:  # cut short: an indented class is outlined from its whole file,
        # where it never ends in the range; alone, a top-level one may parse shorter
        return False if lines[head][:1].isspace() else None
    if unit_end < last - 2 or any(scan.code[unit_end + 1 : last + 1]):
        return False  # the class and more (a string below it may run on past the lines)
    if _ends_in_string(scan, last):
        return None
    return text, _relative(defs, stmts, first)


def units_analysis(lines: Sequence[str], start: int, end: int) -> tuple[str, Analysis] | None:
    """Lines [start, end] of a Python file that are a run of units at one indentation
    (module constants around a class, say), joined, and their spans as ``class_analysis``
    gives a class's (relative to ``start``); None when unsure or when a unit runs on
    past ``end``."""
    first, last = start - 1, end - 1
    scan = python_scan(lines)
    text = _scannable(scan, first, last)
    if text is None or _ends_in_string(scan, last):
        return None
    head = next((n for n in range(first, last + 1) if scan.code[n]), None)
    if head is None or scan.in_string[first]:
        return None
    defs: list[Span] = []
    stmts: list[Span] = []
    try:
        _units(scan, head, scan.indents[head], last, defs, stmts)
    except _Unsure:
        return None
    after = next((n for n in range(last + 1, len(lines)) if scan.code[n]), None)
    if any(span.end_line > end for span in defs) or (
        after is not None and (scan.indents[after] > scan.indents[head] or _goes_on(lines[after]))
    ):
        return None  # a unit goes on below the range
    return text, _relative(defs, stmts, first)


def _scannable(scan: _PyScan, first: int, last: int) -> str | None:
    """Lines [first, last] (0-based) joined, or None where the scan could misread them."""
    lines = scan.lines
    text = "\n".join(lines[first : last + 1])
    if ("\\\n" in text or "\n\t" in text) and any(
        _misread(scan, n) for n in range(first, last + 1)
    ):
        return None  # backslash continuations and tab indents: leave them to the parser
    return text


def _ends_in_string(scan: _PyScan, last: int) -> bool:
    """Line ``last`` (0-based) ends inside a triple-quoted string."""
    return last + 1 < len(scan.lines) and scan.in_string[last + 1]


def _misread(scan: _PyScan, n: int) -> bool:
    """Line ``n`` (0-based) could mislead the scan: it starts with a tab, or a backslash
    continues it onto a line indented no deeper than the statement it goes on. Inside a
    triple-quoted string's body neither matters."""
    lines, code, indents = scan.lines, scan.code, scan.indents
    line = lines[n]
    if line.startswith("\t") and not scan.in_string[n]:
        return True
    if not line.endswith("\\") or n + 1 >= len(lines) or scan.in_string[n + 1]:
        return False
    head = n
    while head > 0 and code[head - 1] and lines[head - 1].endswith("\\"):
        head -= 1  # the first line of the continued statement
    return not code[head] or indents[n + 1] <= indents[head]


def _relative(defs: list[Span], stmts: list[Span], offset: int) -> Analysis:
    """The analysis of ``defs`` and ``stmts`` with lines counted from ``offset + 1``."""
    return Analysis(
        sorted_spans([_shifted(span, offset) for span in defs]),
        sorted_spans([_shifted(span, offset) for span in stmts]),
        True,
    )


def _shifted(span: Span, offset: int) -> Span:
    """``span`` with its lines counted from line ``offset + 1`` of the file."""
    return Span(
        span.start_line - offset,
        span.end_line - offset,
        span.kind,
        span.name,
        span.header_end_line - offset,
    )


def _definition(scan: _PyScan, start: int, head: int, defs: list[Span], stmts: list[Span]) -> int:
    """Record the def or class at ``head`` (decorators from ``start``; 0-based) and, for
    a class, its body's members; its 0-based last line."""
    lines = scan.lines
    end = _py_unit_end(scan, head)
    header_end = _header_end(lines, head, end)
    name = _NAME.match(lines[head])
    kind = "class" if _PY_CLASS.match(lines[head]) else "function"
    defs.append(Span(start + 1, end + 1, kind, name.group(1) if name else None, header_end + 1))
    if kind == "class":
        _members(scan, head, header_end, end, defs, stmts)
    return end


def _members(
    scan: _PyScan, head: int, header_end: int, end: int, defs: list[Span], stmts: list[Span]
) -> None:
    """Record the members of the class body after ``header_end`` up to ``end``."""
    body = next((n for n in range(header_end + 1, end + 1) if scan.code[n]), None)
    if body is None:
        return
    level = scan.indents[body]
    if level <= scan.indents[head]:
        raise _Unsure
    _units(scan, body, level, end, defs, stmts)


def _units(
    scan: _PyScan, n: int, level: int, end: int, defs: list[Span], stmts: list[Span]
) -> None:
    """Record the units indented ``level`` from the code line ``n`` up to ``end``."""
    lines, code, indents = scan.lines, scan.code, scan.indents
    while n <= end:
        if not code[n]:
            n += 1
            continue
        if indents[n] != level or _goes_on(lines[n]):
            raise _Unsure  # a line the member above should have held
        stripped = lines[n].lstrip()
        if stripped.startswith("@"):
            target = _decorated(scan, n, level, end)
            n = _definition(scan, n, target, defs, stmts) + 1
        elif _PY_HEADER.match(lines[n]):
            n = _definition(scan, n, n, defs, stmts) + 1
        else:
            last = _string_tail(scan, statement_last(scan, n, level, end))
            if not _is_docstring(lines, n, last):
                stmts.append(Span(n + 1, last + 1, "statement", None, n + 1))
            n = last + 1


def _decorated(scan: _PyScan, decorator: int, level: int, end: int) -> int:
    """0-based header line of the definition the decorator at ``decorator`` decorates."""
    lines, code, indents = scan.lines, scan.code, scan.indents
    for n in range(decorator + 1, end + 1):
        if not code[n] or indents[n] > level or _closes(lines[n]):
            continue
        if indents[n] < level:
            break
        if lines[n].lstrip().startswith("@"):
            continue
        if _PY_HEADER.match(lines[n]):
            return n
        break
    raise _Unsure


def _header_end(lines: Sequence[str], head: int, end: int) -> int:
    """0-based line of the ``:`` that ends the signature opened at ``head``."""
    depth = 0
    for n in range(head, min(end, head + _MAX_HEADER_LINES) + 1):
        if '"""' in lines[n] or "'''" in lines[n]:
            raise _Unsure
        code = STRING_LITERAL_RE.sub('""', lines[n]).split("#", 1)[0]
        depth += sum(code.count(c) for c in _OPENERS) - sum(code.count(c) for c in ")]}")
        if depth <= 0 and ":" in code:
            return n
    raise _Unsure


def _is_docstring(lines: Sequence[str], first: int, last: int) -> bool:
    """The statement on lines [first, last] (0-based) is one string literal alone."""
    if not _BARE_STRING.match(lines[first]):
        return False
    tail = lines[last]
    if "#" in tail and tail[: tail.rfind("#")].rstrip().endswith(("'", '"')):
        tail = tail[: tail.rfind("#")]  # a comment after the closing quote
    text = "\n".join([*lines[first:last], tail]).strip()
    prefix = len(text) - len(text.lstrip("rRuUbBfF"))
    body = text[prefix:]
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote):
            return (
                body.endswith(quote)
                and len(body) >= 2 * len(quote)
                and quote not in body[len(quote) : -len(quote)]
            )
    return False
