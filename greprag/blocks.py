"""Syntactic block boundaries and outlines (tree-sitter, with line-based fallbacks).

Dedup extends hit ranges to whole syntactic units with :func:`expand_range`; the packer
shrinks a unit that does not fit into :func:`outline`. Lines are 1-based and inclusive.
Languages with a tree-sitter grammar are parsed with it; unknown languages and files that
do not parse cleanly use indentation blocks (Python-like) or brace matching (C-like).
"""

from __future__ import annotations

import bisect
import importlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from greprag.languages import get_language, language_for_path


@dataclass(frozen=True)
class Span:
    start_line: int
    end_line: int
    kind: str  # "class" | "function" | "statement"
    name: str | None
    header_end_line: int  # last line of the signature/header (the line with ':' or '{')


@dataclass(frozen=True)
class _Analysis:
    defs: tuple[Span, ...]  # class- and function-like definitions, sorted by start
    stmts: tuple[Span, ...]  # non-definition statements at top level and in class bodies
    indent_style: bool  # True: bodies are marked by indentation (Python-like)


# --------------------------------------------------------------------------- grammars


@dataclass(frozen=True)
class _Grammar:
    module: str
    function: str
    classes: tuple[str, ...]
    functions: tuple[str, ...]
    wrappers: frozenset[str] = frozenset()  # nodes whose extent a wrapped definition takes
    containers: frozenset[str] = frozenset()  # namespaces: their members count as top level
    extra: str = ""  # query patterns for definitions that need a shape (arrow functions, ...)
    go_doc: bool = False  # plain ``//`` comments directly above are documentation


_JS_ARROW = (
    "(variable_declarator value: [(arrow_function) (function_expression)]) @function\n"
    "({field} value: [(arrow_function) (function_expression)]) @function"
)
_JS_FUNCTIONS = ("function_declaration", "generator_function_declaration", "method_definition")
_TS_CLASSES = (
    "class_declaration",
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
)
_TS_FUNCTIONS = (
    *_JS_FUNCTIONS,
    "function_signature",
    "method_signature",
    "abstract_method_signature",
)
_TS = {
    "classes": _TS_CLASSES,
    "functions": _TS_FUNCTIONS,
    "wrappers": frozenset({"export_statement", "ambient_declaration"}),
    "containers": frozenset({"internal_module", "module"}),
    "extra": _JS_ARROW.format(field="public_field_definition"),
}

_GRAMMARS: dict[str, _Grammar] = {
    "python": _Grammar(
        "tree_sitter_python",
        "language",
        ("class_definition",),
        ("function_definition",),
        wrappers=frozenset({"decorated_definition"}),
    ),
    "java": _Grammar(
        "tree_sitter_java",
        "language",
        (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ),
        ("method_declaration", "constructor_declaration", "compact_constructor_declaration"),
    ),
    "javascript": _Grammar(
        "tree_sitter_javascript",
        "language",
        ("class_declaration",),
        _JS_FUNCTIONS,
        wrappers=frozenset({"export_statement"}),
        extra=_JS_ARROW.format(field="field_definition"),
    ),
    "typescript": _Grammar("tree_sitter_typescript", "language_typescript", **_TS),
    "tsx": _Grammar("tree_sitter_typescript", "language_tsx", **_TS),
    "go": _Grammar(
        "tree_sitter_go",
        "language",
        (),
        ("function_declaration", "method_declaration"),
        extra="(type_spec type: [(struct_type) (interface_type)]) @class",
        go_doc=True,
    ),
    "rust": _Grammar(
        "tree_sitter_rust",
        "language",
        ("struct_item", "enum_item", "trait_item", "impl_item", "union_item"),
        ("function_item", "function_signature_item"),
        containers=frozenset({"mod_item"}),
    ),
    "csharp": _Grammar(
        "tree_sitter_c_sharp",
        "language",
        (
            "class_declaration",
            "interface_declaration",
            "struct_declaration",
            "enum_declaration",
            "record_declaration",
            "record_struct_declaration",
        ),
        (
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "conversion_operator_declaration",
            "local_function_statement",
        ),
        containers=frozenset({"namespace_declaration"}),
    ),
}

_ALIASES = {"tsx": "tsx", "jsx": "javascript", "cs": "csharp", "c#": "csharp", "py": "python"}
_INDENT_LANGUAGES = frozenset({"python"})
_SKIP_MEMBERS = frozenset(
    {
        "comment",
        "line_comment",
        "block_comment",
        "decorator",
        "attribute_item",
        "inner_attribute_item",
        "{",
        "}",
        ";",
        ",",
    }
)
_TLS = threading.local()


def _grammar_key(lang: str | None) -> str | None:
    if lang is None:
        return None
    lowered = lang.lower()
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    known = get_language(lowered)
    return known.name if known is not None and known.name in _GRAMMARS else None


@cache
def _language(key: str) -> Any | None:
    """The tree-sitter Language for a grammar key; None when the wheel is missing."""
    try:
        import tree_sitter

        grammar = _GRAMMARS[key]
        module = importlib.import_module(grammar.module)
        return tree_sitter.Language(getattr(module, grammar.function)())
    except (ImportError, AttributeError, ValueError):
        return None


@cache
def _query(key: str) -> Any | None:
    language = _language(key)
    if language is None:
        return None
    import tree_sitter

    grammar = _GRAMMARS[key]
    patterns = []
    for capture, types in (("class", grammar.classes), ("function", grammar.functions)):
        present = [t for t in types if language.id_for_node_kind(t, True) is not None]
        if present:
            patterns.append("[" + " ".join(f"({t})" for t in present) + f"] @{capture}")
    patterns.append(grammar.extra)
    return tree_sitter.Query(language, "\n".join(p for p in patterns if p))


def _parse(key: str, data: bytes) -> Any | None:
    """Parse with a per-thread cached parser; None when the grammar is unavailable."""
    language = _language(key)
    if language is None:
        return None
    parsers = getattr(_TLS, "parsers", None)
    if parsers is None:
        parsers = _TLS.parsers = {}
    parser = parsers.get(key)
    if parser is None:
        import tree_sitter

        parser = parsers[key] = tree_sitter.Parser(language)
    return parser.parse(data)


# ------------------------------------------------------------------- tree-sitter path


def _end_row(node: Any) -> int:
    """0-based last row a node occupies (a node ending at column 0 ends on the row above)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


def _is_doc_comment(node: Any, go_doc: bool) -> bool:
    if "comment" not in node.type:
        return False
    text = node.text.lstrip()
    if text.startswith(b"/**") or (text.startswith(b"///") and not text.startswith(b"////")):
        return True
    return go_doc and text.startswith(b"//")


def _attached_start(outer: Any, grammar: _Grammar) -> int:
    """0-based first row of a definition with its decorators and doc comments above."""
    start = outer.start_point.row
    sibling = outer.prev_sibling
    while sibling is not None and _end_row(sibling) >= start - 1:
        if sibling.type in ("decorator", "attribute_item") or _is_doc_comment(
            sibling, grammar.go_doc
        ):
            start = sibling.start_point.row
            sibling = sibling.prev_sibling
        else:
            break
    return start


def _body(node: Any) -> Any | None:
    if node.type == "type_spec":  # Go: the struct's field list or the interface itself
        kind = node.child_by_field_name("type")
        if kind is not None and kind.type == "struct_type":
            return next(
                (c for c in kind.named_children if c.type == "field_declaration_list"), kind
            )
        return kind
    if node.type in ("variable_declarator", "field_definition", "public_field_definition"):
        value = node.child_by_field_name("value")
        return value.child_by_field_name("body") if value is not None else None
    return node.child_by_field_name("body")


def _header_end_row(node: Any, body: Any | None) -> int:
    if body is None:
        return _end_row(node)
    for child in body.children:
        if child.type == "{":
            return child.start_point.row
        if child.is_named:
            break
    previous = body.prev_sibling
    while previous is not None and "comment" in previous.type:
        previous = previous.prev_sibling
    if previous is not None and previous.type == ":":
        return previous.start_point.row
    return body.start_point.row


def _name(node: Any) -> str | None:
    for field in ("name", "property", "type"):
        child = node.child_by_field_name(field)
        if child is not None:
            if child.type == "generic_type":
                child = child.child_by_field_name("type") or child
            return child.text.decode("utf-8", "replace")
    return None


def _outer(node: Any, grammar: _Grammar) -> Any:
    """The node whose extent a definition takes (decorators, export, ``const f = ...``)."""
    if node.type == "type_spec" and node.parent is not None:
        specs = [c for c in node.parent.named_children if c.type == "type_spec"]
        return node.parent if len(specs) == 1 else node
    outer = node
    if node.type == "variable_declarator" and node.parent is not None:
        declarators = [c for c in node.parent.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            outer = node.parent
    while outer.parent is not None and outer.parent.type in grammar.wrappers:
        outer = outer.parent
    return outer


def _member_nodes(body: Any) -> list[Any]:
    members = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            members.extend(_member_nodes(child))
        elif child.type not in _SKIP_MEMBERS:
            members.append(child)
    return members


def _is_docstring(node: Any) -> bool:
    return node.type == "expression_statement" and [c.type for c in node.named_children] == [
        "string"
    ]


def _container_body(node: Any, grammar: _Grammar) -> Any | None:
    for candidate in (node, *node.named_children[:2]):
        if candidate.type in grammar.containers:
            return candidate.child_by_field_name("body")
    return None


_MAX_ERROR_SHARE = 0.02  # a parse whose ERROR nodes cover more falls back to line heuristics


def _error_bytes(node: Any) -> int:
    """Bytes covered by ERROR nodes (syntax the grammar does not know, or a cut-off file)."""
    if not node.has_error:
        return 0
    if node.is_error:
        return max(1, node.end_byte - node.start_byte)
    return sum(_error_bytes(child) for child in node.children)


def _tree_analysis(key: str, data: bytes) -> _Analysis | None:
    """Definitions and statements from a clean tree-sitter parse; None when that fails."""
    tree = _parse(key, data)
    if tree is None or _error_bytes(tree.root_node) > len(data) * _MAX_ERROR_SHARE:
        return None
    import tree_sitter

    grammar = _GRAMMARS[key]
    captures = tree_sitter.QueryCursor(_query(key)).captures(tree.root_node)
    defs: list[Span] = []
    outers: set[tuple[int, int]] = set()
    classes: list[Any] = []
    for kind in ("class", "function"):
        for node in captures.get(kind, []):
            outer = _outer(node, grammar)
            outers.add((outer.start_byte, outer.end_byte))
            body = _body(node)
            if kind == "class" and body is not None:
                classes.append(body)
            defs.append(
                Span(
                    _attached_start(outer, grammar) + 1,
                    _end_row(outer) + 1,
                    kind,
                    _name(node),
                    _header_end_row(node, body) + 1,
                )
            )
    stmts: list[Span] = []

    def collect(nodes: list[Any]) -> None:
        for child in nodes:
            if (child.start_byte, child.end_byte) in outers or _is_docstring(child):
                continue
            inner = _container_body(child, grammar)
            if inner is not None:
                collect(_member_nodes(inner))
                continue
            first = child.start_point.row + 1
            stmts.append(Span(first, _end_row(child) + 1, "statement", None, first))

    collect(_member_nodes(tree.root_node))
    for body in classes:
        collect(_member_nodes(body))
    return _Analysis(_sorted(defs), _sorted(stmts), key == "python")


def _sorted(spans: list[Span]) -> tuple[Span, ...]:
    unique = set(spans)
    return tuple(sorted(unique, key=lambda s: (s.start_line, -s.end_line, s.kind)))


# ------------------------------------------------------------------ indentation fallback

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
    start: int  # 1-based
    header_end: int
    end: int
    indent: int
    text: str
    children: list[_Item]


def _logical_lines(lines: list[str], python: bool) -> list[tuple[int, int, int]]:
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


def _indent_analysis(lines: list[str], python: bool) -> _Analysis:
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
    return _Analysis(_sorted(defs), _sorted(stmts), True)


def _classify_items(
    items: list[_Item], python: bool, defs: list[Span], stmts: list[Span], member_level: bool
) -> None:
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
    return Span(item.start, item.end, "statement", None, item.start)


def _is_string_line(text: str) -> bool:
    return re.match(r"[rRuUbBfF]{0,2}(\"\"\"|'''|\"|')", text) is not None


def _indent_kind(item: _Item, python: bool) -> tuple[str | None, str | None]:
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


# ---------------------------------------------------------------------- brace fallback

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
_BRACE_CALL_RE = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:<[^(){};]*>)?\s*\(")
_CONTAINER_RE = re.compile(r"\b(?:namespace|mod|module|package)\b")
_COMMENTS_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_ANNOTATIONS_RE = re.compile(r"@[\w.]+(?:\s*\((?:[^()]|\([^()]*\))*\))?|^(?:\s*\[[^\]]*\])+")


def _brace_analysis(text: str, lines: list[str], key: str | None) -> _Analysis:
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
    text: str, lines: list[str], start: int, offset: int, line: int, line_of: Any
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
    lines: list[str],
    blocks: list[tuple[int, int, int, int]],
    statements: list[tuple[int, int, int]],
    line_of: Any,
    go: bool,
) -> _Analysis:
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
    return _Analysis(_sorted(defs), _sorted(stmts), False)


def _brace_kind(header: str) -> tuple[str | None, str | None]:
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


def _doc_start(lines: list[str], first: int, go: bool) -> int:
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


# --------------------------------------------------------------------------- analysis


@lru_cache(maxsize=64)
def _analyze(text: str, lang: str | None) -> _Analysis:
    key = _grammar_key(lang)
    if key is not None:
        data = text.encode("utf-8", "replace")
        analysis = _tree_analysis(key, data)
        if analysis is None and key == "typescript":
            analysis = _tree_analysis("tsx", data)
        if analysis is not None:
            return analysis
    lines = text.split("\n")
    if key in _INDENT_LANGUAGES or (key is None and _looks_indented(lines)):
        return _indent_analysis(lines, python=key in _INDENT_LANGUAGES)
    return _brace_analysis(text, lines, key)


def _looks_indented(lines: list[str]) -> bool:
    braces = colons = 0
    for line in lines:
        tail = line.rstrip()[-1:]
        braces += tail == "{"
        colons += tail == ":"
    return colons >= braces


def definition_spans(text: str, lang: str | None) -> list[Span]:
    """All class-like (class/interface/enum/struct/trait/impl/record) and function-like
    (function/method/constructor) definitions, nested ones included, sorted by start.
    Decorators, annotations and doc comments directly above belong to the span."""
    return list(_analyze(text, lang).defs)


_FILE_CACHE: OrderedDict[tuple[str, str | None, int, int], list[Span]] = OrderedDict()
_FILE_CACHE_SIZE = 256
_FILE_LOCK = threading.Lock()


def file_spans(path: str, text: str, lang: str | None) -> list[Span]:
    """:func:`definition_spans` cached by (path, hash of text) in a small LRU."""
    if lang is None:
        known = language_for_path(path)
        lang = known.name if known is not None else None
    if path.lower().endswith(".tsx") and lang is not None and lang.lower() == "typescript":
        lang = "tsx"
    key = (path, lang, len(text), hash(text))
    with _FILE_LOCK:
        if key in _FILE_CACHE:
            _FILE_CACHE.move_to_end(key)
            return list(_FILE_CACHE[key])
    spans = definition_spans(text, lang)
    with _FILE_LOCK:
        _FILE_CACHE[key] = spans
        while len(_FILE_CACHE) > _FILE_CACHE_SIZE:
            _FILE_CACHE.popitem(last=False)
    return list(spans)


# ------------------------------------------------------------------------ expansion


def _clamp(text: str, start: int, end: int) -> tuple[int, int]:
    total = text.count("\n") + 1
    start, end = sorted((start, end))
    return min(max(start, 1), total), min(max(end, 1), total)


def _smallest_containing(defs: list[Span] | tuple[Span, ...], start: int, end: int) -> Span | None:
    best: Span | None = None
    for span in defs:
        if span.start_line > start:
            break
        if span.end_line >= end and (
            best is None or span.end_line - span.start_line <= best.end_line - best.start_line
        ):
            best = span
    return best


def expand_range(
    text: str, lang: str | None, start: int, end: int, spans: list[Span] | None = None
) -> tuple[int, int]:
    """Smallest whole syntactic unit covering [start, end] (1-based, inclusive).

    Inside a definition: that definition (a hit on its header or inside a function takes it
    whole). In a class body or at top level: the union of the member definitions and
    statements the range touches, never a neighbour it does not touch."""
    start, end = _clamp(text, start, end)
    analysis = _analyze(text, lang)
    defs = analysis.defs if spans is None else sorted(spans, key=lambda s: s.start_line)
    container = _smallest_containing(defs, start, end)
    if container is not None and (container.kind != "class" or start <= container.header_end_line):
        return container.start_line, container.end_line
    low, high = start, end
    for unit in (*defs, *analysis.stmts):
        if unit == container or unit.end_line < start or unit.start_line > end:
            continue
        if container is not None and not (
            container.start_line <= unit.start_line and unit.end_line <= container.end_line
        ):
            continue
        low, high = min(low, unit.start_line), max(high, unit.end_line)
    return low, high


# -------------------------------------------------------------------------- outlines

_ENUM_RE = re.compile(r"\benum\b")
_MAX_MEMBER_HEADER = 6  # longer member signatures keep their first and last lines
_DOCSTRING_RE = re.compile(r"([rRuUbBfF]{0,2})(\"\"\"|'''|\"|')")


def outline(
    text: str, lang: str | None, start: int, end: int, spans: list[Span] | None = None
) -> str:
    """Outline of the unit at [start, end]: header lines, first docstring line, and for
    class-like units every member's signature with bodies elided (``...`` / ``{ ... }``)."""
    start, end = expand_range(text, lang, start, end, spans)
    analysis = _analyze(text, lang)
    defs = tuple(sorted(spans, key=lambda s: s.start_line)) if spans is not None else analysis.defs
    lines = [line.rstrip("\r") for line in text.split("\n")]
    writer = _Outliner(lines, defs, analysis.stmts, analysis.indent_style)
    units = _top_units((*defs, *analysis.stmts), start, end)
    container = _smallest_containing(defs, start, end)
    if not units and container is not None:
        writer.definition(container, top=True)
        return "\n".join(writer.out)
    covered = start
    for unit in units:
        writer.loose(covered, unit.start_line - 1)
        if unit.kind == "statement":
            writer.statement(unit)
        else:
            writer.definition(unit, top=True)
        covered = unit.end_line + 1
    writer.loose(covered, end)
    return "\n".join(writer.out)


def _top_units(units: tuple[Span, ...], start: int, end: int) -> list[Span]:
    inside = sorted(
        (u for u in units if start <= u.start_line and u.end_line <= end),
        key=lambda s: (s.start_line, -s.end_line),
    )
    result: list[Span] = []
    for unit in inside:
        if not result or unit.start_line > result[-1].end_line:
            result.append(unit)
    return result


class _Outliner:
    def __init__(
        self, lines: list[str], defs: tuple[Span, ...], stmts: tuple[Span, ...], indent: bool
    ) -> None:
        self.lines, self.defs, self.stmts, self.indent = lines, defs, stmts, indent
        self.out: list[str] = []

    def line(self, number: int) -> str:
        return self.lines[number - 1]

    def loose(self, first: int, last: int) -> None:
        """Lines between units: kept unless blank."""
        self.out.extend(self.line(n) for n in range(first, last + 1) if self.line(n).strip())

    def statement(self, unit: Span) -> None:
        first = self.line(unit.start_line)
        if unit.end_line == unit.start_line:
            self.out.append(first)
        elif not self.indent and first.rstrip().endswith("{"):
            self.out.append(first.rstrip() + " ... }")
        else:
            self.out.append(first.rstrip() + " ...")

    def definition(self, span: Span, top: bool) -> None:
        if span.start_line == span.end_line:
            self.out.append(self.line(span.start_line))
            return
        header_end = min(max(span.header_end_line, span.start_line), span.end_line)
        mark = len(self.out)
        self._header(span.start_line, header_end, top)
        if len(self.out) == mark:
            self.out.append(self.line(header_end))
        if not top:
            self._shorten(mark)
        # members of the unit itself; of a nested class only an enum's constants and fields
        members = span.kind == "class" and (
            top or any(_ENUM_RE.search(line) for line in self.out[mark:][-2:])
        )
        if self.indent:
            docstring = self._docstring(header_end, span.end_line) if top else None
            if docstring is not None:
                self.out.append(docstring[1])
            if members:
                shown = self._members(span, docstring[0] if docstring else 0, methods=top)
                if shown or docstring:
                    return
            if top or docstring is not None:
                self.out.append(self._body_indent(span, header_end) + "...")
            else:
                self.out[-1] = self.out[-1].rstrip() + " ..."
            return
        if members:
            self._members(span, 0, methods=top)
            closing = self.line(span.end_line)
            if header_end < span.end_line and closing.strip().startswith("}"):
                self.out.append(closing)
            return
        if header_end >= span.end_line:  # no body: keep the whole declaration
            self.out.extend(self.lines[header_end : span.end_line])
            return
        last = self.out.pop()
        brace = last.rfind("{")
        signature = last[:brace].rstrip() if brace >= 0 else last.rstrip()
        if not signature.strip() and self.out:  # '{' on a line of its own
            signature = self.out.pop().rstrip()
        self.out.append(signature + " { ... }")

    def _header(self, first: int, last: int, top: bool) -> None:
        number = first
        while number <= last:
            stripped = self.line(number).strip()
            indent = self.line(number)[: len(self.line(number)) - len(self.line(number).lstrip())]
            if stripped.startswith("/**"):
                close = number
                while close < last and "*/" not in self.line(close):
                    close += 1
                if top:
                    self.out.append(indent + "/** " + self._doc_summary(number, close) + " */")
                number = close + 1
            elif stripped.startswith("//") and number < last:
                run = number
                while run < last and self.line(run + 1).strip().startswith("//"):
                    run += 1
                if top:
                    self.out.append(self.line(number))
                number = run + 1
            else:
                self.out.append(self.line(number))
                number += 1

    def _doc_summary(self, first: int, last: int) -> str:
        for number in range(first, last + 1):
            content = self.line(number).strip()
            content = content.removeprefix("/**").removesuffix("*/").strip().lstrip("*").strip()
            if content:
                return content
        return ""

    def _docstring(self, header_end: int, end: int) -> tuple[int, str] | None:
        """(line, rendering) of a Python docstring's first line right after the header."""
        number = header_end + 1
        while number <= end and not self.line(number).strip():
            number += 1
        if number > end:
            return None
        raw = self.line(number)
        stripped = raw.strip()
        match = _DOCSTRING_RE.match(stripped)
        if match is None:
            return None
        quote, rest = match.group(2), stripped[match.end() :]
        if quote in rest:
            return number, raw
        content = rest.strip()
        if not content and number < end:
            content = self.line(number + 1).strip().removesuffix(quote).strip()
        indent = raw[: len(raw) - len(raw.lstrip())]
        return number, f"{indent}{match.group(1)}{quote}{content}{quote}"

    def _body_indent(self, span: Span, header_end: int) -> str:
        for number in range(header_end + 1, span.end_line + 1):
            line = self.line(number)
            if line.strip():
                return line[: len(line) - len(line.lstrip())]
        header = self.line(span.start_line)
        return header[: len(header) - len(header.lstrip())] + "    "

    def _shorten(self, mark: int) -> None:
        """Collapse a member's long multi-line signature to its first and last lines."""
        header = self.out[mark:]
        if len(header) <= _MAX_MEMBER_HEADER:
            return
        first = next((i for i, line in enumerate(header) if "(" in line), 0)
        if first >= len(header) - 2:
            return
        below = header[first + 1]
        marker = below[: len(below) - len(below.lstrip())] + "..."
        self.out[mark:] = [*header[: first + 1], marker, header[-1]]

    def _members(self, span: Span, skip: int, methods: bool) -> int:
        """Outline the direct members of a class-like span; returns how many."""
        inner = [
            unit
            for unit in (*self.defs, *self.stmts)
            if span.header_end_line < unit.start_line
            and unit.end_line <= span.end_line
            and unit != span
            and unit.start_line != skip
        ]
        members = _top_units(tuple(inner), span.header_end_line + 1, span.end_line)
        if not methods:
            members = [member for member in members if member.kind == "statement"]
        for member in members:
            if member.kind == "statement":
                self.statement(member)
            else:
                self.definition(member, top=False)
        return len(members)
