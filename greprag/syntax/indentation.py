"""Definitions and statements from indentation, when there is no clean tree-sitter parse.

Used for Python that does not parse (cut-off or newer syntax) and for unknown languages
whose lines end in ``:`` more often than in ``{``. Lines are first joined into logical
lines (open brackets, strings and backslashes continue a line), then nested by indent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from greprag.syntax.spans import Analysis, Span, sorted_spans

__all__ = ["indent_analysis"]

_PY_DEF_RE = re.compile(r"(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
_GENERIC_CLASS_RE = re.compile(
    r"\b(?:class|struct|interface|trait|enum|module|object|record|impl)\s+([A-Za-z_$][\w$]*)"
)
_GENERIC_FUNC_RE = re.compile(
    r"\b(?:def|fn|func|function|fun|sub|proc|method)\s+([A-Za-z_$][\w$]*)"
)
_CLOSERS = frozenset({"end", "}", "};", ")", "]", "end;", "fi", "done", "esac"})
_STRING_OR_COMMENT = re.compile(
    r"""(?P<triple>\"\"\"|''')|(?P<quote>["'])|(?P<comment>\#|//)|(?P<open>[(\[{])|(?P<close>[)\]}])"""
)


@dataclass
class _Item:
    """A logical line with the lines indented under it (its children)."""

    start: int  # 1-based
    header_end: int
    end: int
    indent: int
    text: str
    children: list[_Item]


def _logical_lines(lines: Sequence[str], python: bool) -> list[tuple[int, int, int]]:
    """(first line, last line, indent) of each logical line, skipping blank and comment lines."""
    result: list[tuple[int, int, int]] = []
    depth = 0
    string: str | None = None
    current: list[int] | None = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if current is None and string is None and depth == 0:
            if not stripped or stripped.startswith(("#",) if python else ("#", "//")):
                continue
            current = [number, number, len(line) - len(line.lstrip())]
        position = 0
        while position < len(line):
            if string is not None:
                close = _find_close(line, position, string)
                if close < 0:
                    break
                position, string = close, None
                continue
            match = _STRING_OR_COMMENT.search(line, position)
            if match is None:
                break
            group = match.lastgroup
            position = match.end()
            if group in ("triple", "quote"):
                string = match.group()
            elif group == "comment":
                if match.group() == "//" and python:
                    continue
                break
            elif group == "open":
                depth += 1
            else:
                depth = max(0, depth - 1)
        if current is None:
            continue
        current[1] = number
        if string is not None and len(string) == 1:
            string = None  # an unterminated one-line string ends with its line
        if string is None and depth == 0 and not line.rstrip().endswith("\\"):
            result.append((current[0], current[1], current[2]))
            current = None
    if current is not None:
        result.append((current[0], current[1], current[2]))
    return result


def _find_close(line: str, position: int, quote: str) -> int:
    """Index just after the closing ``quote`` in ``line`` from ``position``; -1 if absent."""
    while True:
        index = line.find(quote, position)
        if index < 0:
            return -1
        backslashes = len(line[:index]) - len(line[:index].rstrip("\\"))
        if backslashes % 2 == 0:
            return index + len(quote)
        position = index + 1


def indent_analysis(lines: Sequence[str], python: bool) -> Analysis:
    """Definitions and statements of a file whose blocks are marked by indentation.

    Logical lines nest under the nearest less-indented one; ``python`` recognises
    ``def``/``class`` and decorators, otherwise any header with a body and a definition
    keyword (``fn``, ``func``, ``class``, ...) is one."""
    roots: list[_Item] = []
    stack: list[_Item] = []
    for first, last, indent in _logical_lines(lines, python):
        while stack and stack[-1].indent >= indent:
            stack.pop()
        item = _Item(first, last, last, indent, lines[first - 1].strip(), [])
        (stack[-1].children if stack else roots).append(item)
        for open_item in stack:
            open_item.end = last
        stack.append(item)
    defs: list[Span] = []
    stmts: list[Span] = []
    _classify_items(roots, python, defs, stmts, member_level=True)
    return Analysis(sorted_spans(defs), sorted_spans(stmts), True)


def _classify_items(
    items: list[_Item], python: bool, defs: list[Span], stmts: list[Span], member_level: bool
) -> None:
    """Sort items into ``defs`` and ``stmts``, recursing into their children.

    Decorators join the definition below them. Statements are kept only at ``member_level``
    (module and class bodies); a closing ``}``/``end`` line joins the block above it."""
    decorators: list[_Item] = []
    for index, item in enumerate(items):
        kind, name = _indent_kind(item, python)
        if python and item.text.startswith("@"):
            decorators.append(item)
            continue
        start = decorators[0].start if decorators and kind else item.start
        if not kind and member_level:
            stmts.extend(_statement(d) for d in decorators)
        decorators = []
        end = item.end
        following = items[index + 1] if index + 1 < len(items) else None
        if not python and following is not None and following.text in _CLOSERS and item.children:
            end = following.end
        if kind:
            defs.append(Span(start, end, kind, name, item.header_end))
        elif member_level and item.text not in _CLOSERS and not _is_string_line(item.text):
            stmts.append(Span(start, end, "statement", None, start))
        _classify_items(item.children, python, defs, stmts, member_level=kind == "class")
    if member_level:
        stmts.extend(_statement(d) for d in decorators)


def _statement(item: _Item) -> Span:
    """A statement span covering the item and its children."""
    return Span(item.start, item.end, "statement", None, item.start)


def _is_string_line(text: str) -> bool:
    """The line opens with a string literal (a docstring or a bare string expression)."""
    return re.match(r"[rRuUbBfF]{0,2}(\"\"\"|'''|\"|')", text) is not None


def _indent_kind(item: _Item, python: bool) -> tuple[str | None, str | None]:
    """(kind, name) when the item is a definition; (None, None) otherwise."""
    if python:
        match = _PY_DEF_RE.match(item.text)
        if match:
            return ("function" if match.group(1) == "def" else "class"), match.group(2)
        return None, None
    if not item.children:
        return None, None
    for kind, pattern in (("class", _GENERIC_CLASS_RE), ("function", _GENERIC_FUNC_RE)):
        match = pattern.search(item.text)
        if match:
            return kind, match.group(1)
    return None, None
