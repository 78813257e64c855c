"""Budget packing: each block goes in whole, as its outline, or is dropped with a reason.

Blocks are taken best first. A block larger than ``max_block_tokens`` (or than what is
left) is offered as its outline: for a class, its header, first docstring line and
member signatures; for a function or statement, its signature and the matched lines,
with explicit ``...`` elisions. The final context is re-counted as a whole, so the
budget holds to the token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from greprag import blocks as syntax
from greprag.fusion.dedup import MergedRange
from greprag.languages import language_for_path
from greprag.models import Block, Drop
from greprag.tokens import count_tokens

LinesOf = Callable[[str], list[str]]


@dataclass
class Packed:
    blocks: list[Block]
    context: str
    tokens: int
    dropped: list[Drop]


def _comment(path: str) -> str:
    lang = language_for_path(path)
    return lang.line_comment if lang else "#"


def _render(block: Block) -> str:
    return f"{block.header(_comment(block.path))}\n{block.text}\n"


def render_context(blocks: list[Block]) -> str:
    """The prompt-ready context: each block under a comment naming its file and lines."""
    return "\n".join(_render(b) for b in blocks)


def _elide(lines: list[str], keep: set[int], start: int, end: int) -> str:
    """The kept lines of [start, end] in order, with ``...`` wherever lines are left out."""
    out: list[str] = []
    previous = start - 1
    for number in sorted(n for n in keep if start <= n <= end):
        if number > previous + 1:
            line = lines[number - 1]
            out.append(line[: len(line) - len(line.lstrip())] + "...")
        out.append(lines[number - 1])
        previous = number
    if previous < end:
        out.append("...")
    return "\n".join(out)


def outline_text(path: str, lines: list[str], item: MergedRange) -> str | None:
    """A shortened form of the range that keeps its signatures and what matched.

    A range that starts with a class header gets the class outline (header, first
    docstring line, member signatures; tree-sitter). Anything else keeps its first line,
    every definition header inside it and each matched line with one line around it.
    """
    start, end = item.start_line, item.end_line
    first = next((n for n in range(start, end + 1) if not _DECORATION.match(lines[n - 1])), start)
    if _CLASS_HEADER.search(lines[first - 1]):
        lang = language_for_path(path)
        lang_name = lang.name if lang else None
        text = "\n".join(lines)
        spans = syntax.file_spans(path, text, lang_name)
        for span in spans:
            if span.start_line == start and span.end_line == end and span.kind == "class":
                return syntax.outline(text, lang_name, start, end, spans) or None
    keep: set[int] = set(range(start, first + 1))
    for number in range(first + 1, end + 1):
        if _DEF_HEADER.match(lines[number - 1]):
            keep.add(number)
    for hit in item.match_lines:
        keep |= {hit - 1, hit, hit + 1}
    return _elide(lines, keep, start, end)


_DECORATION = re.compile(r"\s*(@|#\[|\[|/\*\*|\*|//|$)")
_CLASS_HEADER = re.compile(r"\b(class|interface|enum|record|struct|trait|impl)\s+\w")
_DEF_HEADER = re.compile(
    r"\s*((async\s+)?def|class|fn|func|function)\s+\w|"
    r"\s*((public|private|protected|static|final|abstract|override|async|virtual)\s+)+"
    r"[\w<>\[\], .?]+\("
)


MIN_USEFUL_TOKENS = 24


def pack(
    ranges: Iterable[MergedRange],
    lines_of: LinesOf,
    *,
    budget: int,
    max_block_tokens: int | None = None,
    encoding: str = "cl100k_base",
) -> Packed:
    """Pack ranges (best first) into at most ``budget`` tokens.

    Stops taking ranges once fewer than ``MIN_USEFUL_TOKENS`` are left, so lazily
    produced ranges past that point are never computed.
    """
    cap = max_block_tokens or budget
    chosen: list[Block] = []
    dropped: list[Drop] = []
    used = 0
    for item in ranges:
        if budget - used < MIN_USEFUL_TOKENS:
            dropped.append(
                Drop(item.path, item.start_line, item.end_line, "budget full", round(item.score, 4))
            )
            break
        lines = lines_of(item.path)
        end = min(item.end_line, len(lines))
        if end < item.start_line:
            continue
        whole = Block(
            path=item.path,
            start_line=item.start_line,
            end_line=end,
            text="\n".join(lines[item.start_line - 1 : end]),
            score=round(item.score, 4),
            route=item.route,
        )
        whole.tokens = count_tokens(_render(whole), encoding)
        left = budget - used
        if whole.tokens <= min(cap, left) and not item.outline_only:
            chosen.append(whole)
            used += whole.tokens + 1
            continue
        short_text = outline_text(item.path, lines, item)
        if short_text:
            short = Block(
                path=item.path,
                start_line=item.start_line,
                end_line=end,
                text=short_text,
                score=whole.score,
                route=item.route,
                outline=True,
            )
            short.tokens = count_tokens(_render(short), encoding)
            if short.tokens <= left:
                chosen.append(short)
                used += short.tokens + 1
                continue
        reason = f"over budget ({whole.tokens} tokens whole, {left} left)"
        dropped.append(Drop(item.path, item.start_line, end, reason, whole.score))
    context = render_context(chosen)
    tokens = count_tokens(context, encoding)
    while chosen and tokens > budget:  # joins can tokenize differently: trim to the token
        last = chosen.pop()
        dropped.append(
            Drop(last.path, last.start_line, last.end_line, "over budget after join", last.score)
        )
        context = render_context(chosen)
        tokens = count_tokens(context, encoding)
    return Packed(blocks=chosen, context=context, tokens=tokens, dropped=dropped)
