"""Which analyzer reads a file, the spans cache, and widening a range to whole units.

Languages with a tree-sitter grammar are parsed with it; unknown languages and files that
do not parse cleanly use indentation blocks (Python-like) or brace matching (C-like).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache

from greprag.files import LinesMemo
from greprag.languages import language_for_path
from greprag.syntax.braces import brace_analysis
from greprag.syntax.grammars import grammar_key
from greprag.syntax.indentation import indent_analysis
from greprag.syntax.scan import class_skeleton
from greprag.syntax.spans import Analysis, Span, smallest_containing
from greprag.syntax.treesitter import tree_analysis

__all__ = [
    "analyze",
    "definition_spans",
    "expand_in_region",
    "expand_range",
    "file_spans",
    "kept_skeleton",
    "region_analysis",
    "skeleton_ahead",
    "skeleton_analysis",
    "spans_language",
]

_INDENT_LANGUAGES = frozenset({"python"})


@lru_cache(maxsize=256)
def analyze(text: str, lang: str | None) -> Analysis:
    """Spans of ``text``: tree-sitter when the language has a grammar and the file parses
    cleanly (TypeScript retried as TSX), else indentation or brace matching. Cached."""
    key = grammar_key(lang)
    if key is not None:
        data = text.encode("utf-8", "replace")
        analysis = tree_analysis(key, data)
        if analysis is None and key == "typescript":
            analysis = tree_analysis("tsx", data)
        if analysis is not None:
            return analysis
    lines = text.split("\n")
    if key in _INDENT_LANGUAGES or (key is None and _looks_indented(lines)):
        return indent_analysis(lines, python=key in _INDENT_LANGUAGES)
    return brace_analysis(text, lines, key)


def _looks_indented(lines: Sequence[str]) -> bool:
    """As many lines end in ``:`` as in ``{`` (an unknown language that indents blocks)."""
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
    return list(analyze(text, lang).defs)


_FILE_CACHE: OrderedDict[tuple[str, str | None, int, int], list[Span]] = OrderedDict()
_FILE_CACHE_SIZE = 256
_FILE_LOCK = threading.Lock()


def spans_language(path: str, lang: str | None) -> str | None:
    """The language ``path`` is analyzed as: ``lang``, else its extension's; TSX files as
    ``tsx``."""
    if lang is None:
        known = language_for_path(path)
        lang = known.name if known is not None else None
    if path.lower().endswith(".tsx") and lang is not None and lang.lower() == "typescript":
        lang = "tsx"
    return lang


def file_spans(path: str, text: str, lang: str | None) -> list[Span]:
    """:func:`definition_spans` cached by (path, hash of text) in a small LRU."""
    lang = spans_language(path, lang)
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


_REGIONS = LinesMemo(512)  # spans of parts of files, per file content


def region_analysis(
    lines: Sequence[str], lang: str | None, first: int, last: int
) -> tuple[str, Analysis] | None:
    """Lines [first, last] alone, joined, and their tree-sitter analysis; None when the
    language has no grammar or they do not parse cleanly by themselves. Cached per file
    content and range (widening and class outlines both parse regions through it)."""
    key = grammar_key(lang)
    if key is None:
        return None

    def compute() -> tuple[str, Analysis] | None:
        text = "\n".join(lines[first - 1 : last])
        analysis = tree_analysis(key, text.encode("utf-8", "replace"), strict=True)
        return None if analysis is None else (text, analysis)

    return _REGIONS.get(lines, (key, first, last), compute)


def skeleton_analysis(
    lines: Sequence[str], lang: str | None, first: int, last: int
) -> tuple[str, Analysis] | None:
    """Lines [first, last] alone, joined, and the tree-sitter analysis of their skeleton
    (``scan.class_skeleton``: code blocks below class level and comments emptied). It
    holds a class's spans, its members' and their headers, as the lines' own parse would,
    but no span inside a function: for class outlines only. None without a grammar or a
    brace scan, or when the skeleton does not parse cleanly. Cached per file content and
    range."""
    key = grammar_key(lang)
    if key is None or lang is None:
        return None

    def compute() -> tuple[str, Analysis] | None:
        analysis = _skeleton_of(lines, lang, key, first, last)
        return None if analysis is None else ("\n".join(lines[first - 1 : last]), analysis)

    return _REGIONS.get(lines, ("skeleton", key, first, last), compute)


_FILE_SKELETONS = LinesMemo(2048)  # whole files' skeleton analyses, by ``skeleton_ahead``


def skeleton_ahead(
    lines: Sequence[str], lang: str, stop: Callable[[], bool] = lambda: False
) -> bool:
    """Analyze a whole file's skeleton (``skeleton_analysis`` of all its lines) before a
    class outline asks, and keep it for ``kept_skeleton``, unless ``stop`` (asked as the
    parse goes) says to give up; False, analyzing nothing, once the memo is full."""
    if _FILE_SKELETONS.full():
        return False
    key = grammar_key(lang)
    if key is not None:
        made = _skeleton_of(lines, lang, key, 1, len(lines), stop)
        if not stop():  # whole: kept (None when it does not parse cleanly)
            _FILE_SKELETONS.get(lines, key, lambda: made)
    return True


def kept_skeleton(lines: Sequence[str], lang: str | None) -> Analysis | None:
    """The analysis of the whole file's skeleton that ``skeleton_ahead`` kept; None when
    it kept none or the skeleton did not parse cleanly."""
    key = grammar_key(lang)
    return None if key is None else _FILE_SKELETONS.peek(lines, key)


def _skeleton_of(
    lines: Sequence[str],
    lang: str,
    key: str,
    first: int,
    last: int,
    stop: Callable[[], bool] | None = None,
) -> Analysis | None:
    """The tree-sitter analysis of lines [first, last]'s skeleton; None when it does not
    parse cleanly, the file has no brace scan, or ``stop`` gave up on it."""
    shell = class_skeleton(lines, lang, first, last)
    if shell is None:
        return None
    data = "\n".join(shell).encode("utf-8", "replace")
    return tree_analysis(key, data, strict=True, stop=stop)


def expand_in_region(
    lines: Sequence[str], lang: str | None, first: int, last: int, start: int, end: int
) -> tuple[int, int] | None:
    """:func:`expand_range` of [start, end] computed on lines [first, last] alone (whole
    top-level units around the range): a fraction of a long file's parse. None when those
    lines do not parse cleanly by themselves (the caller then parses the whole file)."""
    parsed = region_analysis(lines, lang, first, last)
    if parsed is None:
        return None
    text, analysis = parsed
    low, high = _expand(text, analysis, start - first + 1, end - first + 1, list(analysis.defs))
    return low + first - 1, high + first - 1


@lru_cache(maxsize=256)
def _line_count(text: str) -> int:
    """Lines in ``text``; remembered, as a file's text is widened and outlined many times."""
    return text.count("\n") + 1


def _clamp(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) in order and inside the text's lines."""
    total = _line_count(text)
    start, end = sorted((start, end))
    return min(max(start, 1), total), min(max(end, 1), total)


def expand_range(
    text: str,
    lang: str | None,
    start: int,
    end: int,
    spans: list[Span] | None = None,
    analysis: Analysis | None = None,
) -> tuple[int, int]:
    """Smallest whole syntactic unit covering [start, end] (1-based, inclusive).

    Inside a definition: that definition (a hit on its header or inside a function takes it
    whole). In a class body or at top level: the union of the member definitions and
    statements the range touches, never a neighbour it does not touch. ``analysis``: the
    text's, when the caller has it."""
    return _expand(text, analysis or analyze(text, lang), start, end, spans)


def _expand(
    text: str, analysis: Analysis, start: int, end: int, spans: list[Span] | None
) -> tuple[int, int]:
    start, end = _clamp(text, start, end)
    defs = analysis.defs if spans is None else sorted(spans, key=lambda s: s.start_line)
    container = smallest_containing(defs, start, end)
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
