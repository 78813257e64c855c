"""The tree-sitter grammar table, loaded lazily: no grammar wheel is imported until a file
of its language is parsed, and a missing wheel means "no grammar" rather than an error."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from greprag.languages import get_language

__all__ = ["GRAMMARS", "Grammar", "grammar_key", "load_language", "parse", "query"]


@dataclass(frozen=True)
class Grammar:
    """How to load one tree-sitter grammar and which of its nodes are definitions."""

    module: str  # the grammar wheel's module
    function: str  # its function returning the language pointer
    classes: tuple[str, ...]  # node types of class-like definitions
    functions: tuple[str, ...]  # node types of function-like definitions
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

GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "tree_sitter_python",
        "language",
        ("class_definition",),
        ("function_definition",),
        wrappers=frozenset({"decorated_definition"}),
    ),
    "java": Grammar(
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
    "javascript": Grammar(
        "tree_sitter_javascript",
        "language",
        ("class_declaration",),
        _JS_FUNCTIONS,
        wrappers=frozenset({"export_statement"}),
        extra=_JS_ARROW.format(field="field_definition"),
    ),
    "typescript": Grammar("tree_sitter_typescript", "language_typescript", **_TS),
    "tsx": Grammar("tree_sitter_typescript", "language_tsx", **_TS),
    "go": Grammar(
        "tree_sitter_go",
        "language",
        (),
        ("function_declaration", "method_declaration"),
        extra="(type_spec type: [(struct_type) (interface_type)]) @class",
        go_doc=True,
    ),
    "rust": Grammar(
        "tree_sitter_rust",
        "language",
        ("struct_item", "enum_item", "trait_item", "impl_item", "union_item"),
        ("function_item", "function_signature_item"),
        containers=frozenset({"mod_item"}),
    ),
    "csharp": Grammar(
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
_TLS = threading.local()  # one parser per grammar and thread (parsers are not thread-safe)
_CHUNK_BYTES = 1 << 16  # read at a time by a parse that may be stopped


def grammar_key(lang: str | None) -> str | None:
    """The key in :data:`GRAMMARS` for a language name or alias; None without a grammar."""
    if lang is None:
        return None
    lowered = lang.lower()
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    known = get_language(lowered)
    return known.name if known is not None and known.name in GRAMMARS else None


@cache
def load_language(key: str) -> Any | None:
    """The tree-sitter Language for a grammar key; None when the wheel is missing."""
    try:
        import tree_sitter

        grammar = GRAMMARS[key]
        module = importlib.import_module(grammar.module)
        return tree_sitter.Language(getattr(module, grammar.function)())
    except (ImportError, AttributeError, ValueError):
        return None


@cache
def query(key: str) -> Any | None:
    """One query capturing ``@class`` and ``@function`` nodes (the kinds this grammar
    version knows, plus the grammar's shaped patterns); None when the wheel is missing."""
    language = load_language(key)
    if language is None:
        return None
    import tree_sitter

    grammar = GRAMMARS[key]
    patterns = []
    for capture, types in (("class", grammar.classes), ("function", grammar.functions)):
        present = [t for t in types if language.id_for_node_kind(t, True) is not None]
        if present:
            patterns.append("[" + " ".join(f"({t})" for t in present) + f"] @{capture}")
    patterns.append(grammar.extra)
    return tree_sitter.Query(language, "\n".join(p for p in patterns if p))


def parse(key: str, data: bytes, stop: Callable[[], bool] | None = None) -> Any | None:
    """Parse with a per-thread cached parser; None when the grammar is unavailable, or
    when ``stop`` (asked as the parse goes, in Python: the interpreter may switch
    threads there) says to give up."""
    language = load_language(key)
    if language is None:
        return None
    parsers = getattr(_TLS, "parsers", None)
    if parsers is None:
        parsers = _TLS.parsers = {}
    parser = parsers.get(key)
    if parser is None:
        import tree_sitter

        parser = parsers[key] = tree_sitter.Parser(language)
    if stop is None:
        return parser.parse(data)
    view = memoryview(data)
    try:
        tree = parser.parse(
            lambda offset, _point: view[offset : offset + _CHUNK_BYTES],
            progress_callback=lambda _offset, _error: stop(),
        )
    except ValueError:  # stopped (py-tree-sitter 0.26 raises; others return None)
        tree = None
    if tree is None:
        parser.reset()  # else its next parse would resume this one
        return None
    # a tree read in chunks holds no source (reading a node's text off it crashes
    # py-tree-sitter 0.26.1): parsed again from the bytes, reusing every node (~0.05 ms)
    return parser.parse(data, old_tree=tree)
