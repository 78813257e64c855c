"""Fast block widening by scanning around the hit, without parsing the whole file.

Parsing a 3,000-line file with tree-sitter takes 10–50 ms here, and a retrieval widens
hits in about ten files, so the hot path scans locally instead: indentation for Python,
brace depth (strings and comments stripped) for the C-like languages. Each returns the
innermost enclosing function or class with its decorators, annotations and doc comment,
or, for a statement at module or class level, that statement. It returns ``None`` where
the text is too irregular to be sure; the caller then uses tree-sitter
(:func:`greprag.syntax.analysis.expand_range`). How often both agree on real code is
pinned by ``tests/comparison/test_scan_vs_treesitter.py``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from greprag.files import LinesMemo

__all__ = ["LocalExpander", "class_end", "class_skeleton", "enclosing_class"]

_PY_HEADER = re.compile(r"\s*(?:async\s+def|def|class)\b")
_PY_CLASS = re.compile(r"\s*class\b")
_PY_CLAUSE = re.compile(r"(else|elif|except|finally)\b")
_BARE_STRING = re.compile(r"\s*[rRuUbBfF]{0,2}[\"']")
# strings unrolled (``"[^"\\]*(?:\\.[^"\\]*)*"``): the same matches as ``"(?:\\.|[^"\\])*"``,
# a tenth faster over a file; _PY_QUOTE finds what opens a string or comment outside strings
_PY_QUOTE = re.compile(r'"""|\'\'\'|"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\'|#')
_STRIP = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|\'(?:\\.|[^\'\\]){0,6}\'|`[^`\\]*(?:\\.[^`\\]*)*`|//.*$|/\*.*?\*/'
)
_MAY_STRIP = re.compile(r"[\"'`/]")  # what a string or comment starts with
_CLASS_LIKE = re.compile(
    r"\b(class|interface|enum|record|struct|trait|impl|namespace|object|type\s+\w+\s+struct)\b"
)
_CONTROL = re.compile(
    r"^\s*(\}\s*)?(if|else|for|foreach|while|do|switch|try|catch|finally|synchronized|"
    r"using|lock|match|loop|select|unsafe|static\s*\{|\{|case|default)\b"
)
# a block inside a function that is no function's body: an anonymous class, a lambda
_INNER = re.compile(r"\bnew\s+[\w.$<>]+\s*\([^;]*\)\s*\{\s*$|->\s*\{\s*$")
_FUNC_LIKE = re.compile(r"[\w$>\]]\s*\([^;]*$|\bfn\s+\w+|\bfunc\b|=>\s*\{?$")
_MAX_BLOCK_LINES = 40000  # a class may be its whole (long) file
_MAX_SIGNATURE_LINES = 12  # annotations and parameters before a function's ``{``
_CLOSERS = (")", "]", "}")


@dataclass
class _PyScan:
    """A Python file's lines and, per line, whether it starts inside a triple-quoted
    string, whether it is code that sets indentation, and its indent width; kept per file
    content, with the ends of blocks already found."""

    lines: Sequence[str]
    in_string: tuple[bool, ...]  # line starts inside a triple-quoted string
    code: tuple[bool, ...]  # not blank, comment or string body
    indents: tuple[int, ...]
    code_indents: tuple[int, ...]  # the indent of a code line, NOT_CODE for any other line
    unit_ends: dict[int, int] = field(default_factory=dict)  # head -> last line (0-based)
    _tops: tuple[int, ...] | None = None
    _margins: tuple[int, ...] | None = None

    @property
    def tops(self) -> tuple[int, ...]:
        """0-based lines that start a top-level unit: code at the margin, not a decorator
        (it belongs to the unit below), a closing bracket or a clause that goes on a
        statement (``else:``, ``except ...:``)."""
        if self._tops is None:
            self._tops = tuple(
                n
                for n, (code, indent) in enumerate(zip(self.code, self.indents, strict=True))
                if code
                and not indent
                and not self.lines[n].startswith(("@", *_CLOSERS))
                and not _PY_CLAUSE.match(self.lines[n])
            )
        return self._tops

    @property
    def margins(self) -> tuple[int, ...]:
        """0-based lines that start with neither a space nor a tab, blank ones excepted."""
        if self._margins is None:
            self._margins = tuple(
                n for n, line in enumerate(self.lines) if line[:1] not in _INDENTED
            )
        return self._margins


_NOT_CODE = 1 << 62  # above any indent: the code indent of a blank, comment or string line
_INDENTED = ("", " ", "\t")


def _python_scan(lines: Sequence[str]) -> _PyScan:
    """Mark the lines inside triple-quoted strings: one opens with either kind of triple
    quote and closes with the same kind (the other kind inside it is text)."""
    states = []
    code = []
    indents = []
    code_indents = []
    opened = ""  # the triple quote of the string the line so far is inside
    for line in lines:
        inside = bool(opened)
        states.append(inside)
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        is_code = bool(stripped) and not inside and not stripped.startswith("#")
        indents.append(indent)
        code.append(is_code)
        code_indents.append(indent if is_code else _NOT_CODE)
        if '"""' in line or "'''" in line:
            opened = _open_after(line, opened)
    # tuples of plain values: the garbage collector stops walking them after one pass,
    # where lists kept per file would be walked by every full collection
    return _PyScan(lines, tuple(states), tuple(code), tuple(indents), tuple(code_indents))


def _open_after(line: str, opened: str) -> str:
    """The triple quote whose string is still open after ``line`` ("" for none), given the
    one open before it. Quotes in one-line strings and comments open nothing."""
    at = 0
    while True:
        if opened:
            close = line.find(opened, at)
            if close < 0:
                return opened
            at, opened = close + 3, ""
        token = _PY_QUOTE.search(line, at)
        if token is None or token.group() == "#":
            return ""
        if token.group() in ('"""', "'''"):
            opened = token.group()
        at = token.end()


def _py_code(scan: _PyScan, n: int) -> bool:
    """Line n (0-based) is code that sets indentation: not blank, comment or string body."""
    return scan.code[n]


def _py_unit_end(scan: _PyScan, head: int) -> int:
    """0-based last line of the block opened at ``head``: the last code line indented deeper
    (closing brackets at the header's indent belong to it)."""
    known = scan.unit_ends.get(head)
    if known is not None:
        return known
    base = scan.indents[head]
    last = _last_within(scan, head, base, len(scan.lines) - 1, _closes)
    last = _comment_tail(scan, _string_tail(scan, last), base)
    scan.unit_ends[head] = last
    return last


def _py_with_decorators(scan: _PyScan, head: int) -> int:
    """0-based first line of the definition at ``head`` with its decorators above."""
    start = head
    base = scan.indents[head]
    code, indents, lines = scan.code, scan.indents, scan.lines
    n = head - 1
    while n >= 0 and code[n]:
        if indents[n] > base or (indents[n] == base and _closes(lines[n])):
            while n >= 0 and not (code[n] and indents[n] <= base and not _closes(lines[n])):
                n -= 1  # inside a decorator's brackets: up to the line that opens them
        if n < 0 or indents[n] != base or not lines[n].lstrip().startswith("@"):
            break
        start = n
        n -= 1
    return start


def _closes(line: str) -> bool:
    """The line starts by closing a bracket."""
    return line.lstrip().startswith(_CLOSERS)


def python_expand(scan: _PyScan, lo: int) -> tuple[int, int] | None:
    """Innermost def/class around line ``lo`` (1-based), or the statement at its level."""
    lines = scan.lines
    first = lo - 1
    if first >= len(lines):
        return None
    if scan.in_string[first]:
        return _py_in_string(scan, lo)
    if not _py_code(scan, first):
        return _py_comment(scan, first)
    if lines[first].lstrip().startswith("@"):
        return _py_decorated(scan, first)
    if _PY_HEADER.match(lines[first]):
        head = first
    else:
        level = scan.indents[first] + _closes(lines[first])  # ``) -> int:`` closes its header
        head = _enclosing_header(scan, first, level)
        if head < 0 or _PY_CLASS.match(lines[head]):
            statement = _py_statement(scan, first, head)
            if statement is None or not lines[statement[0] - 1].lstrip().startswith("@"):
                return statement
            return _py_decorated(scan, statement[0] - 1)  # inside a decorator's brackets
    return _py_with_decorators(scan, head) + 1, _py_unit_end(scan, head) + 1


def _py_decorated(scan: _PyScan, decorator: int) -> tuple[int, int] | None:
    """The definition that the decorator at line ``decorator`` (0-based) decorates, with
    all its decorators; None when no def or class follows at its indent."""
    lines, code, indents = scan.lines, scan.code, scan.indents
    for n in range(decorator + 1, len(lines)):
        if not code[n] or indents[n] != indents[decorator] or _closes(lines[n]):
            continue
        if lines[n].lstrip().startswith("@"):
            continue
        if not _PY_HEADER.match(lines[n]):
            return None
        return _py_with_decorators(scan, n) + 1, _py_unit_end(scan, n) + 1
    return None


def _enclosing_header(scan: _PyScan, first: int, level: int) -> int:
    """0-based line of the innermost def/class header above line ``first`` whose body holds
    code indented ``level``; -1 at module level."""
    lines, code_indents = scan.lines, scan.code_indents
    for n in range(first - 1, -1, -1):
        if code_indents[n] >= level or _closes(lines[n]):
            continue  # deeper, not code, or the closing line of a bracket (a signature's)
        if _PY_HEADER.match(lines[n]):
            return n
        level = code_indents[n]
        if level == 0:
            break
    return -1


def _py_comment(scan: _PyScan, first: int) -> tuple[int, int] | None:
    """A comment line (0-based ``first``) inside a function's body: that function; None
    for any other comment or blank line (the parser decides)."""
    if not scan.lines[first].lstrip().startswith("#"):
        return None
    head = _enclosing_header(scan, first, scan.indents[first])
    if head < 0 or _PY_CLASS.match(scan.lines[head]):
        return None
    end = _py_unit_end(scan, head)
    return None if end < first else (_py_with_decorators(scan, head) + 1, end + 1)


def _py_in_string(scan: _PyScan, lo: int) -> tuple[int, int] | None:
    """Line ``lo`` (1-based) inside a triple-quoted string: the unit around the line that
    opens the string when it covers ``lo`` (a function's docstring: the function), else
    the line alone (a statement that is a string: a class's or module's docstring)."""
    opener = lo - 1
    while opener > 0 and scan.in_string[opener]:
        opener -= 1
    found = python_expand(scan, opener + 1)
    if found is None:
        return None
    return found if found[0] <= lo <= found[1] else (lo, lo)


def _py_statement(scan: _PyScan, first: int, class_head: int) -> tuple[int, int] | None:
    """The statement holding line ``first`` at module or class-body level."""
    lines, code_indents = scan.lines, scan.code_indents
    level = _member_indent(scan, class_head)
    floor = class_head + 1 if class_head >= 0 else 0
    start = first
    while start > floor and not (code_indents[start] <= level and not _goes_on(lines[start])):
        start -= 1
    end = statement_last(scan, start, level, len(lines) - 1)
    if not _BARE_STRING.match(lines[start]):  # a docstring-like string stands for its line
        end = _string_tail(scan, end)
    if end < first:
        return None
    return start + 1, end + 1


def statement_last(scan: _PyScan, first: int, level: int, stop: int) -> int:
    """0-based last line of the statement at ``first`` in a body indented ``level``: the
    code lines after it, up to ``stop``, indented deeper or going on (``)``, ``else:``)."""
    return _last_within(scan, first, level, stop, _goes_on)


def _last_within(
    scan: _PyScan, first: int, level: int, stop: int, continues: Callable[[str], bool]
) -> int:
    """0-based last code line after ``first``, up to ``stop``, before the first one
    indented ``level`` or less that does not ``continue`` what is above it."""
    lines, code_indents = scan.lines, scan.code_indents
    last = first
    for n in range(first + 1, stop + 1):
        indent = code_indents[n]
        if indent == _NOT_CODE:
            continue
        if indent <= level and not continues(lines[n]):
            break
        last = n
    return last


def _goes_on(line: str) -> bool:
    """The line continues the statement above: a closing bracket, ``else:``, ``except``."""
    stripped = line.lstrip()
    return stripped.startswith(_CLOSERS) or _PY_CLAUSE.match(stripped) is not None


def _comment_tail(scan: _PyScan, last: int, base: int) -> int:
    """``last`` (0-based), moved past the comments indented deeper than ``base`` that
    follow it (blank lines between them): they end the block above."""
    lines, indents = scan.lines, scan.indents
    for n in range(last + 1, len(lines)):
        stripped = lines[n].lstrip()
        if not stripped:
            continue
        if not stripped.startswith("#") or indents[n] <= base:
            break
        last = n
    return last


def _string_tail(scan: _PyScan, last: int) -> int:
    """``last`` (0-based), moved past the rest of a triple-quoted string it opens."""
    in_string = scan.in_string
    while last + 1 < len(in_string) and in_string[last + 1]:
        last += 1
    return last


def _member_indent(scan: _PyScan, class_head: int) -> int:
    """Indent of the statements at the level of ``class_head``'s body (0: module level)."""
    if class_head < 0:
        return 0
    for n in range(class_head + 1, len(scan.lines)):
        if _py_code(scan, n):
            return scan.indents[n]
    return scan.indents[class_head] + 4


# -- brace languages ---------------------------------------------------------------


@dataclass
class _BraceScan:
    """A C-like file's lines, their code without strings and comments, and brace depths;
    kept per file content, with the ends of blocks already found."""

    lines: Sequence[str]
    code: tuple[str, ...]  # each line with strings and comments removed
    depth: tuple[int, ...]  # brace depth at the start of each line
    in_comment: tuple[bool, ...]  # the line starts inside a block comment
    block_ends: dict[int, int | None] = field(default_factory=dict)  # head -> close line
    openers: tuple[int, ...] | None = None  # ``_openers``, computed on first use


def _openers(scan: _BraceScan) -> tuple[int, ...]:
    """Per 0-based line, the nearest line above it that opens a block holding it (a lower
    depth at its start and a ``{`` in its code), -1 for none: what a walk up the file
    would find, in one pass for the whole file. A stack keeps the candidates: depth rises
    only across a line with a ``{``, so a candidate at or above a later line's depth is
    never again the nearest."""
    if scan.openers is None:
        found: list[int] = []
        stack: list[int] = []
        for n, level in enumerate(scan.depth):
            while stack and scan.depth[stack[-1]] >= level:
                stack.pop()
            found.append(stack[-1] if stack else -1)
            if "{" in scan.code[n]:
                stack.append(n)
        scan.openers = tuple(found)
    return scan.openers


def _blank_out(match: re.Match[str]) -> str:
    """A string literal becomes ``""``; a comment, nothing (``} // end`` still ends in ``}``)."""
    return "" if match.group().startswith("/") else '""'


def _brace_scan(lines: Sequence[str]) -> _BraceScan | None:
    """Strip strings and comments and track brace depth; None when a ``}`` closes more
    than was opened (the text is too irregular for a local scan)."""
    code: list[str] = []
    depth: list[int] = []
    in_comment: list[bool] = []
    level = 0
    in_block_comment = False
    for line in lines:
        depth.append(level)
        in_comment.append(in_block_comment)
        text = line
        if in_block_comment:
            end = text.find("*/")
            if end < 0:
                code.append("")
                continue
            text = text[end + 2 :]
            in_block_comment = False
        if _MAY_STRIP.search(text):  # most code lines hold no quote and no slash
            text = _STRIP.sub(_blank_out, text)
            start = text.find("/*")
            if start >= 0:
                text = text[:start]
                in_block_comment = True
        code.append(text)
        if "{" in text or "}" in text:
            level += text.count("{") - text.count("}")
            if level < 0:
                return None
    return _BraceScan(lines, tuple(code), tuple(depth), tuple(in_comment))  # see _python_scan


def _brace_header(scan: _BraceScan, n: int) -> str:
    """The code of line ``n`` with up to three lines of the signature above it."""
    parts = [scan.code[n]]
    k = n - 1
    while k >= 0 and k >= n - 3:
        prev = scan.code[k].strip()
        if prev in ("", '""') or prev.endswith((";", "{", "}")) or prev.startswith("@"):
            break  # blank or a comment (stripped to nothing), or a string literal alone
        parts.insert(0, prev)
        k -= 1
    return " ".join(p.strip() for p in parts)


def _brace_end(scan: _BraceScan, head: int) -> int | None:
    """0-based line where the block opened at ``head`` closes; None if it does not close
    within ``_MAX_BLOCK_LINES``. Kept per head: a class's close is asked for each hit in it."""
    if head in scan.block_ends:
        return scan.block_ends[head]
    base = scan.depth[head]
    opened = False
    close = None
    for n in range(head, min(len(scan.lines), head + _MAX_BLOCK_LINES)):
        after = scan.depth[n + 1] if n + 1 < len(scan.depth) else 0
        if after > base or "{" in scan.code[n]:
            opened = True
        if opened and after <= base:
            close = n
            break
    scan.block_ends[head] = close
    return close


def _brace_with_docs(scan: _BraceScan, head: int) -> int:
    """Move the start up over a multi-line signature, annotations and doc comments."""
    start = head
    while start > 0 and scan.depth[start - 1] == scan.depth[head]:
        prev_code = scan.code[start - 1].strip()
        if not prev_code or prev_code.endswith((";", "{", "}")):
            break
        start -= 1  # the signature goes on above (``throws``, parameters, a lone ``{``)
    while start > 0:
        prev = scan.lines[start - 1].strip()
        if scan.in_comment[start - 1] or prev.endswith("*/") or prev.startswith("/*"):
            opener = start - 1  # up to the line that opens the block comment
            while opener > 0 and scan.in_comment[opener]:
                opener -= 1
            if not scan.lines[opener].lstrip().startswith("/**"):
                break  # a plain block comment (a licence header) documents nothing
            start = opener
        elif prev.startswith(("@", "#[", "[", "///", "//")):
            start -= 1
        else:
            break
    while start < head and not scan.lines[start].strip():
        start += 1
    return start


def brace_expand(scan: _BraceScan, lo: int) -> tuple[int, int] | None:
    """Innermost function or class around line ``lo`` (1-based), or the member statement."""
    first = lo - 1
    if first >= len(scan.lines):
        return None
    opens_here = scan.code[first].count("{") > scan.code[first].count("}")
    head = first if opens_here and not _inner_block(scan, first, _brace_header(scan, first)) else -1
    openers, n = _openers(scan), first
    while head < 0:
        n = openers[n]
        if n < 0:
            return _brace_member(scan, first)
        header = _brace_header(scan, n)
        if _inner_block(scan, n, header):
            continue
        if _declares_class(header) and not _FUNC_LIKE.search(header):
            return _brace_member(scan, first)  # at class level
        head = n
    end = _brace_end(scan, head)
    if end is None:
        return None
    return _brace_with_docs(scan, head) + 1, end + 1


def _brace_member(scan: _BraceScan, first: int) -> tuple[int, int] | None:
    """Line ``first`` (0-based) at class or top level: a comment line is the declaration
    it documents (a doc comment directly above one) or else itself; a code line, its
    statement. None where the scan cannot tell."""
    if scan.code[first].strip():
        opener = _block_opener(scan, first)
        if opener is not None and opener != first:  # a signature or annotation above its body
            return brace_expand(scan, opener + 1)
        return _brace_statement(scan, first)
    if not scan.lines[first].strip():
        return _brace_statement(scan, first)
    below = first + 1
    while below < len(scan.lines) and (
        scan.in_comment[below] or (scan.lines[below].strip() and not scan.code[below].strip())
    ):
        below += 1  # the comment goes on (blank lines inside a block comment too)
    if below < len(scan.lines) and scan.code[below].strip():
        found = brace_expand(scan, below + 1)
        if found is None or found[0] <= first + 1:
            return found  # None: the declaration below is beyond the scan (a class's)
    return first + 1, first + 1


def _statement_start(scan: _BraceScan, first: int) -> int:
    """0-based first line of the statement that line ``first`` is part of."""
    start = first
    while start > 0:
        prev = scan.code[start - 1].strip()
        if not prev or prev.endswith((";", "{", "}")):
            break
        start -= 1
    return start


def _block_opener(scan: _BraceScan, first: int) -> int | None:
    """0-based line whose ``{`` opens the body of the function or class whose header (or
    annotations) line ``first`` is part of; None for a statement."""
    start = _statement_start(scan, first)
    for n in range(first, min(len(scan.lines), first + _MAX_SIGNATURE_LINES)):
        code = scan.code[n].strip()
        if ";" in code or code.endswith("}"):
            return None
        if "{" in code:
            header = " ".join(scan.code[k].strip() for k in range(start, n + 1))
            if _declares_class(header) or _FUNC_LIKE.search(header.split("{", 1)[0] + "{"):
                return n
            return None
    return None


def _declares_class(header: str) -> bool:
    """A class-like keyword before any parenthesis (``impl`` in a condition is a name)."""
    return _CLASS_LIKE.search(header.split("(", 1)[0]) is not None


def _inner_block(scan: _BraceScan, n: int, header: str) -> bool:
    """The block opened on line ``n`` lies inside a function: a control statement (its
    condition may span lines), an anonymous class or a lambda."""
    inner = _CONTROL.match(scan.code[n]) or _CONTROL.match(header) or _INNER.search(header)
    return inner is not None and not _declares_class(header)


def _brace_statement(scan: _BraceScan, first: int) -> tuple[int, int] | None:
    """A member or top-level statement: from its first line to its ``;`` (or block end)."""
    start = _statement_start(scan, first)
    end = first
    base = scan.depth[start]
    for n in range(start, min(len(scan.lines), start + 200)):
        end = n
        after = scan.depth[n + 1] if n + 1 < len(scan.depth) else 0
        stripped = scan.code[n].rstrip()
        if after <= base and (stripped.endswith((";", "}", ",")) or n + 1 >= len(scan.lines)):
            break
    else:
        return None
    return _brace_with_docs(scan, start) + 1, end + 1


_SCANS = LinesMemo(4096)  # per file content, across retrievals


def python_scan(lines: Sequence[str]) -> _PyScan:
    """The indentation scan of a Python file's ``lines``, kept per file content."""
    return _SCANS.get(lines, True, lambda: _python_scan(lines))


def _scan_of(lines: Sequence[str], lang: str) -> _PyScan | _BraceScan | None:
    """The indentation scan of a Python file, the brace scan of any other (None when its
    braces do not balance), kept per file content."""
    python = lang == "python"
    return _SCANS.get(lines, python, lambda: _python_scan(lines) if python else _brace_scan(lines))


def scan_ahead(lines: Sequence[str], lang: str) -> bool:
    """Scan a file of ``lang`` before a retrieval asks (kept as ``_scan_of`` keeps it,
    with the tables it builds on first use); False, scanning nothing, once half the
    files the cache keeps are scanned: the rest is left to the retrievals' own files."""
    if _SCANS.half_full():
        return False
    scan = _scan_of(lines, lang)
    if isinstance(scan, _BraceScan):  # the tables a scan builds on first use, too
        _openers(scan)
    elif scan is not None:
        _ = scan.tops, scan.margins
    return True


def class_end(lines: Sequence[str], lang: str, head: int) -> int | None:
    """The line (1-based) where the class declared on line ``head`` of a brace-language
    file closes; None when that line declares no class by itself (no class-like word, or
    a brace before it: an annotation's array) or the file's braces do not balance."""
    scan = _scan_of(lines, lang)
    if not isinstance(scan, _BraceScan):
        return None
    code = scan.code[head - 1]
    word = _CLASS_LIKE.search(code)
    if word is None or "{" in code[: word.start()] or "}" in code[: word.start()]:
        return None
    close = _brace_end(scan, head - 1)
    return None if close is None else close + 1


def class_skeleton(lines: Sequence[str], lang: str, start: int, end: int) -> list[str] | None:
    """Lines [start, end] (1-based) of a brace-language file with the inside of every code
    block below class level and of every block comment blank: a line that begins and ends
    inside a function body, an initializer, an anonymous class or a ``/* ... */``. The
    line count, the braces that open and close each definition, each member's header and
    the first and last lines of each comment stay: a class outline reads the same spans
    off it, for a fraction of a parse. None when the file's braces do not balance."""
    scan = _scan_of(lines, lang)
    if not isinstance(scan, _BraceScan):
        return None
    depth, code, in_comment = scan.depth, scan.code, scan.in_comment
    out = list(lines[start - 1 : end])
    outermost = None  # the depth inside the outermost open code block
    for n in range(start - 1, end):
        level = depth[n]
        if outermost is not None and outermost > level:
            outermost = None  # that block closed
        after = depth[n + 1] if n + 1 < len(depth) else 0
        in_code = outermost is not None and after >= outermost
        if (in_comment[n] and "*/" not in lines[n]) or (
            in_code and _lowest(code[n], level) >= outermost
        ):
            out[n - start + 1] = ""
        if after > level and outermost is None and _opens_code(scan, n):
            outermost = level + 1
    return out


_ANNOTATION = re.compile(r"@[\w.$]+(\s*\([^()]*\))?")
_CODE_OPENER = re.compile(r"\)\s*(throws\s+[\w.$<>, ]+)?\{$|->\s*\{$|^static\s*\{$")


def _opens_code(scan: _BraceScan, n: int) -> bool:
    """Line ``n`` surely opens a code block, not a class body: its declaration (annotations
    left out) ends in ``) {`` (a method, a constructor, an anonymous class, an enum
    constant's body), ``-> {`` or is ``static {``, with its parentheses balanced and no
    class-like word before the first. Anything else counts as a class: kept whole."""
    header = " ".join(scan.code[k].strip() for k in range(_statement_start(scan, n), n + 1))
    header = _ANNOTATION.sub("", header).strip()
    if not _CODE_OPENER.search(header) or header.count("(") != header.count(")"):
        return False
    return not _declares_class(header)


def _lowest(code: str, level: int) -> int:
    """The lowest brace depth within a line of code that starts at depth ``level``."""
    if "}" not in code:
        return level
    lowest = level
    for char in code:
        if char == "{":
            level += 1
        elif char == "}":
            level -= 1
            lowest = min(lowest, level)
    return lowest


def python_balance(scan: _PyScan, start: int, end: int) -> tuple[int, int]:
    """[start, end] (1-based) grown to whole units of one level: up to the header of the
    block the first line sits in when the range runs out of that block, and down to the
    end of a block the range opens but does not close."""
    lines, code_indents = scan.lines, scan.code_indents
    level = min(code_indents[start - 1 : end], default=_NOT_CODE)
    if level == _NOT_CODE:  # no code line in the range
        return start, end
    first = start - 1
    head = scan.code.index(True, start - 1, end)
    if code_indents[head] > level:
        for n in range(head - 1, -1, -1):
            if code_indents[n] <= level:
                first = _py_with_decorators(scan, n)
                break
        else:
            first = 0
    last = end - 1
    for n in range(end, len(lines)):
        indent = code_indents[n]
        if indent == _NOT_CODE:
            continue
        if indent <= level and not _closes(lines[n]):
            break
        last = n
    return first + 1, last + 1


def brace_balance(scan: _BraceScan, start: int, end: int) -> tuple[int, int] | None:
    """[start, end] (1-based) grown until its braces balance: up to the header of a block
    it leaves, down to the close of a block it opens; None when that does not happen
    within ``_MAX_BLOCK_LINES``."""
    after = scan.depth[end] if end < len(scan.depth) else 0
    base = min(after, min(scan.depth[start - 1 : end]))
    first = start - 1
    if scan.depth[first] > base:  # the range closes a block opened above it
        while first > 0 and not (scan.depth[first] == base and "{" in scan.code[first]):
            first -= 1
        first = _brace_with_docs(scan, first)
    last = end - 1
    while after > base:  # the range opens a block it does not close
        last += 1
        if last >= len(scan.lines) or last - end > _MAX_BLOCK_LINES:
            return None
        after = scan.depth[last + 1] if last + 1 < len(scan.depth) else 0
    return first + 1, last + 1


def _above_decorators(scan: _PyScan, start: int, end: int) -> int:
    """``end`` moved above the decorators (one-line or spread over lines) that the unit
    after it starts with. Only lines at the margin can be one or end it."""
    margins = scan.margins
    for index in range(bisect_right(margins, end) - 1, bisect_right(margins, start) - 1, -1):
        n = margins[index]
        line = scan.lines[n]
        if line.startswith("@"):
            end = n - 1
        elif line.strip() and not line.startswith(("#", *_CLOSERS)):
            break
    return end


def written_until(lines: Sequence[str], lang: str | None, line: int) -> int | None:
    """1-based last line of the code being written at line ``line``: the outermost
    function or method holding it (its header line included; a closure's, a lambda's or
    an anonymous class's enclosing function holds it too), else the definition or
    statement holding it at class or module level. None in a language with neither
    indentation nor braces to read, or where the scan cannot tell."""
    if not 1 <= line <= len(lines) or lang not in _SCANNED_LANGUAGES:
        return None
    scan = _scan_of(lines, lang)
    if isinstance(scan, _PyScan):
        end, expand_one = _py_function_end(scan, line - 1), python_expand
    elif scan is not None:
        end, expand_one = _brace_function_end(scan, line - 1), brace_expand
    else:
        return None
    if end is not None:
        return end + 1
    unit = expand_one(scan, line)
    return unit[1] if unit is not None and unit[0] <= line <= unit[1] else None


_SCANNED_LANGUAGES = frozenset(
    {"python", "java", "javascript", "typescript", "go", "rust", "csharp"}
)


def enclosing_class(lines: Sequence[str], line: int) -> int | None:
    """1-based header line of the class whose body holds the Python definition on line
    ``line`` (its method, however deep in ``if`` blocks); None for a module-level or a
    nested function."""
    scan = python_scan(lines)
    head = _enclosing_header(scan, line - 1, scan.code_indents[line - 1])
    return head + 1 if head >= 0 and _PY_CLASS.match(lines[head]) else None


def _py_function_end(scan: _PyScan, first: int) -> int | None:
    """0-based last line of the outermost def holding line ``first``, below any class."""
    lines = scan.lines
    is_def = (
        scan.code[first] and _PY_HEADER.match(lines[first]) and not _PY_CLASS.match(lines[first])
    )
    head = first if is_def else -1
    n = _enclosing_header(scan, first, scan.code_indents[first])
    while n >= 0 and not _PY_CLASS.match(lines[n]):
        head = n
        n = _enclosing_header(scan, n, scan.indents[n])
    return _py_unit_end(scan, head) if head >= 0 else None


def _brace_function_end(scan: _BraceScan, first: int) -> int | None:
    """0-based line closing the outermost function holding line ``first``, below any
    class (an anonymous one and blocks of control statements are looked through)."""
    head = -1
    code = scan.code[first]
    if code.count("{") > code.count("}"):  # the line opens a block: its own header
        header = _brace_header(scan, first)
        if not _inner_block(scan, first, header) and not _declares_class(header):
            head = first
    openers, n = _openers(scan), first
    while (n := openers[n]) >= 0:  # line n opens a block holding the line
        header = _brace_header(scan, n)
        if _inner_block(scan, n, header):
            continue
        if _declares_class(header) and not _FUNC_LIKE.search(header):
            break
        head = n
    return _brace_end(scan, head) if head >= 0 else None


REGION_SHARE = 0.5  # a region over this share of its file: parse the file (cached) instead


class LocalExpander:
    """Per-file scans, built once per file content and reused for every hit in it."""

    def region(
        self, lines: Sequence[str], lang: str | None, lo: int, hi: int
    ) -> tuple[int, int] | None:
        """1-based first and last line of the top-level units holding lines lo..hi, with
        one more unit above and below, in a Python file: what tree-sitter must see to
        widen the hit when the scan is unsure. None when that is most of the file."""
        if lang != "python" or not lines:
            return None
        scan = python_scan(lines)
        tops = scan.tops
        first = bisect_right(tops, lo - 1) - 2  # the unit holding lo, then one above
        last = bisect_right(tops, hi - 1) + 1  # the unit after the one holding hi, then its end
        start = tops[first] if first >= 0 else 0
        end = tops[last] - 1 if last < len(tops) else len(lines) - 1
        end = _above_decorators(scan, start, end)
        if end - start + 1 > len(lines) * REGION_SHARE:
            return None
        return start + 1, end + 1

    def balance(
        self, path: str, lines: Sequence[str], lang: str | None, start: int, end: int
    ) -> tuple[int, int] | None:
        """[start, end] grown to whole units of one level (a range of several units can
        start inside a class and end outside it, or the other way round); None when the
        scan cannot tell."""
        scan = _scan_of(lines, lang) if lang is not None else None
        if scan is None or not 1 <= start <= end <= len(lines):
            return None
        if isinstance(scan, _PyScan):
            return python_balance(scan, start, end)
        return brace_balance(scan, start, end)

    def expand(
        self, path: str, lines: Sequence[str], lang: str | None, lo: int, hi: int
    ) -> tuple[int, int] | None:
        """The block around lines lo..hi, or None when tree-sitter should decide. A Python
        range that starts or ends on a blank or comment line the scan cannot place (at
        module or class level) is widened around its first and last code lines instead,
        its own lines kept: nearly always tree-sitter's answer, without a parse."""
        if lang is None:
            return None
        scan = _scan_of(lines, lang)
        if scan is None:
            return None
        widened = _expand_ends(scan, lo, hi)
        if widened is None and isinstance(scan, _PyScan) and 1 <= lo <= hi <= len(lines):
            first, last = _py_code_ends(scan, lo, hi)
            inner = _expand_ends(scan, first, last) if (first, last) != (lo, hi) else None
            if inner is not None:
                widened = min(inner[0], lo), max(inner[1], hi)
        return widened


def _expand_ends(scan: _PyScan | _BraceScan, lo: int, hi: int) -> tuple[int, int] | None:
    """The units around lines lo and hi (1-based) and everything between them; None when
    the scan cannot place either."""
    expand_one = python_expand if isinstance(scan, _PyScan) else brace_expand
    first = expand_one(scan, lo)
    last = first if hi == lo else expand_one(scan, hi)
    if first is None or last is None:
        return None
    return min(first[0], last[0]), max(first[1], last[1])


def _py_code_ends(scan: _PyScan, lo: int, hi: int) -> tuple[int, int]:
    """Lines lo..hi (1-based) less the blank and comment lines at either end; as they are
    when they hold nothing else."""

    def blank_or_comment(n: int) -> bool:
        return not scan.code[n - 1] and not scan.in_string[n - 1]

    while lo < hi and blank_or_comment(lo):
        lo += 1
    while hi > lo and blank_or_comment(hi):
        hi -= 1
    return lo, hi
