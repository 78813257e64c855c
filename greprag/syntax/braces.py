"""Definitions and statements by brace matching, when there is no clean tree-sitter parse.

Used for C-like languages without a grammar and for files a grammar cannot parse. One
pass over tokens (comments and strings skipped) pairs ``{`` with ``}`` and ends
statements at ``;``, at a ``}`` or ``,`` not continued, or at a line that starts anew.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any

from greprag.syntax.spans import Analysis, Span, sorted_spans

__all__ = ["brace_analysis"]

# comments, preprocessor lines, strings (Rust: lifetimes are not chars), words, symbols
_BRACE_TOKENS = {
    rust: re.compile(
        r"//[^\n]*|/\*.*?(?:\*/|\Z)|(?m:^[ \t]*\#(?![!\[])[^\n]*)"
        r'|"""(?:.|\n)*?(?:"""|\Z)|@"(?:[^"]|"")*"?|"(?:\\.|[^"\\\n])*"?|`(?:\\.|[^`\\])*`?'
        r"|'(?:\\[^'\n]{1,10}|[^'\\\n])'"
        + ("" if rust else r"|'(?:\\.|[^'\\\n])*'?")
        + r"|[A-Za-z0-9_$]+|\S",
        re.S,
    )
    for rust in (False, True)
}
# a line starting with one of these continues the statement above it
_CONTINUATIONS = frozenset(
    (
        "else",
        "catch",
        "finally",
        "while",
        "where",
        ",",
        ")",
        ".",
        "?",
        ":",
        "=",
        "&",
        "|",
        "+",
        "-",
        "*",
        "/",
        "]",
        ">",
        "<",
        ";",
    )
)
# words that make a call-shaped header a control block, not a function
_CONTROL = frozenset(
    (
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "else",
        "do",
        "try",
        "finally",
        "synchronized",
        "using",
        "lock",
        "foreach",
        "return",
        "fixed",
        "unsafe",
        "checked",
        "unchecked",
        "new",
        "when",
        "match",
        "loop",
        "select",
        "defer",
        "go",
    )
)
_BRACE_CLASS_RE = re.compile(
    r"\b(?:class|interface|enum|struct|trait|record|union)\s+([A-Za-z_$][\w$]*)"
    r"|\bimpl\b(?:\s*<[^{]*?>)?\s+(?:[\w:<>, ]+?\s+for\s+)?([A-Za-z_]\w*)"
    r"|\btype\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b"
)
_BRACE_FUNC_RES = (
    re.compile(r"\bfunc\b\s*(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"),
    re.compile(r"\bfn\s+([A-Za-z_]\w*)"),
    re.compile(r"\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)"),
    re.compile(
        r"([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:<[^=]*>\s*)?"
        r"(?:\(.*\)|[A-Za-z_$][\w$]*)\s*(?::.*)?=>$"
    ),
)
# a call-shaped header (``name(...) {``): a method in C-like languages
_BRACE_CALL_RE = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:<[^(){};]*>)?\s*\(")
_CONTAINER_RE = re.compile(r"\b(?:namespace|mod|module|package)\b")
_COMMENTS_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ANNOTATIONS_RE = re.compile(r"@[\w.]+(?:\s*\((?:[^()]|\([^()]*\))*\))?|^(?:\s*\[[^\]]*\])+")


def brace_analysis(text: str, lines: Sequence[str], key: str | None) -> Analysis:
    """Blocks by brace matching; statements end at ';', at a '}' not continued, at a ','
    followed by a line break, or at a line that does not continue the previous one."""
    newlines = [i for i, char in enumerate(text) if char == "\n"]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    starts: list[int | None] = [None]  # statement start offset per brace depth
    pending: list[int | None] = [None]  # end offset of a '}' or ',' that may end it
    parens = [0]  # open '(' and '[' per brace depth
    opens: list[tuple[int, int]] = []  # (statement start, '{' offset)
    blocks: list[tuple[int, int, int, int]] = []  # (start, '{', '}', depth)
    statements: list[tuple[int, int, int]] = []  # (start, end, depth)
    last_line = previous_end = 0
    for match in _BRACE_TOKENS[key == "rust"].finditer(text):
        token = match.group()
        if token.startswith(("//", "/*")) or token.lstrip().startswith("#"):
            continue
        offset, depth, line = match.start(), len(opens), line_of(match.start())
        mark = pending[depth]
        if mark is not None:
            pending[depth] = None
            comma = text[mark] == ","
            if (line > line_of(mark)) if comma else token not in _CONTINUATIONS and token != "{":
                statements.append((starts[depth], mark, depth))
                starts[depth] = None
        elif (
            starts[depth] is not None
            and line > last_line
            and parens[depth] == 0
            and token not in _CONTINUATIONS
            and token != "{"
            and _statement_ended(text, lines, starts[depth], offset, line, line_of)
        ):
            statements.append((starts[depth], previous_end, depth))
            starts[depth] = None
        last_line = line
        if token == "{":
            if starts[depth] is None:
                starts[depth] = offset
            opens.append((starts[depth], offset))
            starts.append(None)
            pending.append(None)
            parens.append(0)
        elif token == "}":
            if not opens:
                continue
            if starts[depth] is not None:
                statements.append((starts[depth], previous_end, depth))
            starts.pop()
            pending.pop()
            parens.pop()
            start, brace = opens.pop()
            blocks.append((start, brace, offset, depth - 1))
            pending[depth - 1] = offset
        elif token == ";" and parens[depth] == 0:
            if starts[depth] is not None:
                statements.append((starts[depth], offset, depth))
            starts[depth] = None
        else:
            if starts[depth] is None:
                starts[depth] = offset
            if token in "([":
                parens[depth] += 1
            elif token in ")]":
                parens[depth] = max(0, parens[depth] - 1)
            elif token == "," and parens[depth] == 0:
                pending[depth] = offset
        previous_end = match.end() - 1
    for depth, start in enumerate(starts):
        if start is not None:
            end = pending[depth] if pending[depth] is not None else len(text) - 1
            statements.append((start, end, depth))
    return _brace_spans(text, lines, blocks, statements, line_of, go=key == "go")


def _statement_ended(
    text: str, lines: Sequence[str], start: int, offset: int, line: int, line_of: Any
) -> bool:
    """A token first on its line ends a statement lacking ';' (Go) when it is not indented
    deeper than the statement and the previous line looks complete."""
    column = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    start_line = line_of(start)
    start_column = len(lines[start_line - 1]) - len(lines[start_line - 1].lstrip())
    if column > start_column:
        return False
    previous = _COMMENTS_RE.sub("", text[start:offset]).rstrip()
    previous_line = previous.rsplit("\n", 1)[-1].strip()
    if previous_line.startswith(("@", "[", "#[")):
        return False
    return not previous.endswith(tuple(",([=+-*/&|.?:<>{"))


def _brace_spans(
    text: str,
    lines: Sequence[str],
    blocks: list[tuple[int, int, int, int]],
    statements: list[tuple[int, int, int]],
    line_of: Any,
    go: bool,
) -> Analysis:
    """Turn matched blocks and statements (character offsets) into spans.

    A block whose header names a class or function is a definition (with its doc comment
    above); statements are kept at top level and directly inside classes and namespaces,
    never inside function bodies."""
    defs: list[Span] = []
    def_starts: set[int] = set()
    levels: list[tuple[int, int, int]] = []  # (open, close, depth) whose statements we keep
    for start, brace, close, depth in blocks:
        header = " ".join(_COMMENTS_RE.sub(" ", text[start:brace]).split())
        kind, name = _brace_kind(header)
        if kind == "class" or (kind is None and _CONTAINER_RE.search(header)):
            levels.append((brace, close, depth + 1))
        if kind is None:
            continue
        def_starts.add(start)
        first = _doc_start(lines, line_of(start), go)
        defs.append(Span(first, line_of(close), kind, name, line_of(brace)))
    stmts = [
        Span(line_of(start), line_of(end), "statement", None, line_of(start))
        for start, end, depth in statements
        if start not in def_starts
        and (depth == 0 or any(o < start < c and d == depth for o, c, d in levels))
    ]
    return Analysis(sorted_spans(defs), sorted_spans(stmts), False)


def _brace_kind(header: str) -> tuple[str | None, str | None]:
    """(kind, name) of the block a header opens: a class-like keyword, a function keyword
    or arrow, or a call-shaped header that is not a control statement; else (None, None)."""
    header = _ANNOTATIONS_RE.sub(" ", header).strip()
    before_paren = header.split("(", 1)[0]
    match = _BRACE_CLASS_RE.search(before_paren)
    if match:
        return "class", next(g for g in match.groups() if g)
    for pattern in _BRACE_FUNC_RES:
        match = pattern.search(header)
        if match:
            return "function", match.group(1)
    match = _BRACE_CALL_RE.search(header)
    if match is None or "=" in header[: match.start()].replace("=>", ""):
        return None, None
    words = re.findall(r"[A-Za-z_$][\w$]*", header[: match.end()])
    if any(word in _CONTROL for word in words) or header.endswith("->"):
        return None, None
    return "function", match.group(1)


def _doc_start(lines: Sequence[str], first: int, go: bool) -> int:
    """Extend a definition's first line up over a doc comment directly above it."""
    line = first - 1
    while line >= 1:
        stripped = lines[line - 1].strip()
        if stripped.startswith("///") or (go and stripped.startswith("//")):
            first = line
        elif stripped.endswith("*/"):
            top = line
            while top >= 1 and "/*" not in lines[top - 1]:
                top -= 1
            if top < 1 or not lines[top - 1].strip().startswith("/**"):
                break
            first = line = top
        else:
            break
        line -= 1
    return first
