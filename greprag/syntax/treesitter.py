"""Definitions and statements from a tree-sitter parse: the reference analysis.

Each captured definition takes the extent of its outer node (decorators, ``export``,
``const f = ...``) plus the doc comments directly above it. Statements are the other
members of the module, of namespaces and of class bodies. A parse whose ERROR nodes
cover more than 2% of the file is refused, so the line-based analyzers take over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from greprag.syntax.grammars import GRAMMARS, Grammar, parse, query
from greprag.syntax.spans import Analysis, Span, sorted_spans

__all__ = ["tree_analysis"]

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


def _end_row(node: Any) -> int:
    """0-based last row a node occupies (a node ending at column 0 ends on the row above)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


def _is_doc_comment(node: Any, go_doc: bool) -> bool:
    """A ``/** ... */`` or ``///`` comment (any ``//`` one in Go), which belongs to the
    definition below it."""
    if "comment" not in node.type:
        return False
    text = node.text.lstrip()
    if text.startswith(b"/**") or (text.startswith(b"///") and not text.startswith(b"////")):
        return True
    return go_doc and text.startswith(b"//")


def _attached_start(outer: Any, grammar: Grammar) -> int:
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
    """The node holding a definition's members or statements; None for a bodiless one
    (an abstract method, a signature)."""
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
    """0-based row where the header ends: the body's ``{``, or the ``:`` before it (Python);
    the whole definition when it has no body."""
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
    """The defined name (for a generic Go/Rust type, the type without its parameters)."""
    for field in ("name", "property", "type"):
        child = node.child_by_field_name(field)
        if child is not None:
            if child.type == "generic_type":
                child = child.child_by_field_name("type") or child
            return child.text.decode("utf-8", "replace")
    return None


def _outer(node: Any, grammar: Grammar) -> Any:
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
    """The named members of a body or module, without comments, decorators and punctuation
    (an enum's trailing declarations are members too)."""
    members = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            members.extend(_member_nodes(child))
        elif child.type not in _SKIP_MEMBERS:
            members.append(child)
    return members


def _is_docstring(node: Any) -> bool:
    """A statement that is only a string literal: a docstring, not a unit of its own."""
    return node.type == "expression_statement" and [c.type for c in node.named_children] == [
        "string"
    ]


def _container_body(node: Any, grammar: Grammar) -> Any | None:
    """The body of a namespace-like node (directly, or as one of its first two children),
    whose members count as top level; None for any other node."""
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


def tree_analysis(
    key: str, data: bytes, *, strict: bool = False, stop: Callable[[], bool] | None = None
) -> Analysis | None:
    """Definitions and statements from a clean tree-sitter parse; None when that fails
    (``strict``: when the parse has any error at all) or ``stop``, asked as the parse
    goes and after the query, says to give up."""
    tree = parse(key, data, stop)
    if tree is None or _error_bytes(tree.root_node) > len(data) * _MAX_ERROR_SHARE:
        return None
    if strict and tree.root_node.has_error:
        return None
    import tree_sitter

    grammar = GRAMMARS[key]
    # not stopped within (the query's own progress callback crashes py-tree-sitter
    # 0.26 when it lets a long query go on): ~3 ms on the longest Java skeletons
    captures = tree_sitter.QueryCursor(query(key)).captures(tree.root_node)
    if stop is not None and stop():
        return None
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
    return Analysis(sorted_spans(defs), sorted_spans(stmts), key == "python")
