"""Small tree-sitter helpers shared by the Java and TypeScript analyzers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree


@cache
def language(name: str) -> Language:
    if name == "java":
        import tree_sitter_java as grammar

        return Language(grammar.language())
    if name == "typescript":
        import tree_sitter_typescript as ts_grammar

        return Language(ts_grammar.language_typescript())
    if name == "tsx":
        import tree_sitter_typescript as ts_grammar

        return Language(ts_grammar.language_tsx())
    raise ValueError(f"no grammar for {name!r}")


def parse(lang: str, source: bytes) -> Tree:
    return Parser(language(lang)).parse(source)


@cache
def _query(lang: str, pattern: str) -> Query:
    return Query(language(lang), pattern)


def captures(lang: str, pattern: str, node: Node) -> dict[str, list[Node]]:
    """Query captures by name (the query is compiled once per pattern)."""
    return QueryCursor(_query(lang, pattern)).captures(node)


def text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None and node.text else ""


def same(a: Node | None, b: Node) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte


def occurrences(
    tree: Tree,
    source: bytes,
    name: str,
    after: int,
    kinds: frozenset[str],
) -> Iterator[Node]:
    """Identifier nodes spelling ``name`` (of a type in ``kinds``) past byte ``after``."""
    pattern = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
    for match in pattern.finditer(source, after):
        node = tree.root_node.descendant_for_byte_range(match.start(), match.end())
        if (
            node is not None
            and node.type in kinds
            and node.start_byte == match.start()
            and node.end_byte == match.end()
        ):
            yield node


def cursor(node: Node, lines: list[str]) -> tuple[int, int]:
    """(1-based line, 0-based char column) of a node's start."""
    row, byte_col = node.start_point
    line_text = lines[row]
    return row + 1, len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
