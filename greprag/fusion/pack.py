"""Budget packing: each block goes in whole, as its outline, or is dropped with a reason.

Blocks are taken best first. A block larger than ``max_block_tokens`` (or than what is
left) is offered as its outline: for a class, its header, first docstring line and
member signatures; for a function or statement, its signature and the matched lines,
with explicit ``...`` elisions. The final context is re-counted as a whole, so the
budget holds to the token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from greprag import syntax
from greprag.fusion.dedup import MergedRange
from greprag.models import Block, Drop
from greprag.render import block_text, render_context
from greprag.tokens import count_tokens, count_tokens_upto

LinesOf = Callable[[str], list[str]]


@dataclass
class Packed:
    blocks: list[Block]
    context: str
    tokens: int
    dropped: list[Drop]


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


def shortened_forms(path: str, lines: list[str], item: MergedRange) -> Iterator[str]:
    """Ever shorter forms of the range that keep its signatures and what matched.

    First, for a range that is one class, the class outline (header, first docstring
    line, member signatures; tree-sitter). Then the first line(s), every definition
    header inside and each matched line with one line around it. Last, the first
    line(s) and the matched lines alone (a huge class whose outline would not fit).
    """
    start, end = item.start_line, item.end_line
    first = next((n for n in range(start, end + 1) if not _DECORATION.match(lines[n - 1])), start)
    if _CLASS_HEADER.search(lines[first - 1]):
        outline = syntax.class_outline(path, lines, start, end)
        if outline:
            yield outline
    keep: set[int] = set(range(start, first + 1))
    for hit in item.match_lines:
        keep |= {hit - 1, hit, hit + 1}
    headers = {n for n in range(first + 1, end + 1) if _is_def_header(lines[n - 1])}
    if headers - keep:
        yield _elide(lines, keep | headers, start, end)
    yield _elide(lines, keep, start, end)


_DECORATION = re.compile(r"\s*(@|#\[|\[|/\*\*|\*|//|$)")
_CLASS_HEADER = re.compile(r"\b(class|interface|enum|record|struct|trait|impl)\s+\w")
_DEF_HEADER = re.compile(
    r"\s*((async\s+)?def|class|fn|func|function)\s+\w|"
    r"\s*((public|private|protected|static|final|abstract|override|async|virtual)\s+)+"
    r"[\w<>\[\], .?]+\("
)


def _is_def_header(line: str) -> bool:
    """``_DEF_HEADER`` matches ``line`` (checked for the words it needs first: cheaper)."""
    return (
        "(" in line or "def" in line or "class" in line or "fn" in line or "func" in line
    ) and _DEF_HEADER.match(line) is not None


def _first_fitting(
    item: MergedRange,
    lines: list[str],
    end: int,
    score: float,
    cap: int,
    left: int,
    encoding: str,
) -> Block | None:
    """The longest shortened form within ``cap`` (the shortest one may use all that is left,
    ``cap`` being at most ``left``). Shorter forms are made only when a longer one fails."""
    forms = shortened_forms(item.path, lines, item)
    text: str | None = next(forms)
    while text is not None:
        block = Block(item.path, item.start_line, end, text, score, item.route, outline=True)
        block.tokens = count_tokens_upto(block_text(block), cap, encoding)
        if block.tokens <= cap:
            return block
        text = next(forms, None)
        if text is None:  # the shortest form
            block.tokens = count_tokens_upto(block_text(block), left, encoding)
            return block if block.tokens <= left else None
    return None


MIN_USEFUL_TOKENS = 24


def pack(
    ranges: Iterable[MergedRange],
    lines_of: LinesOf,
    *,
    budget: int,
    max_block_tokens: int | None = None,
    max_usage_tokens: int | None = None,
    encoding: str = "cl100k_base",
) -> Packed:
    """Pack ranges (best first) into at most ``budget`` tokens.

    Stops taking ranges once fewer than ``MIN_USEFUL_TOKENS`` are left, so lazily
    produced ranges past that point are never computed. A range only usage probes hit
    goes in whole up to ``max_usage_tokens``; past that, its call sites are what counts.
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
        if not whole.text.strip():  # a hit on blank lines (a pattern like ^\s+$) says nothing
            dropped.append(Drop(item.path, item.start_line, end, "blank lines", whole.score))
            continue
        left = budget - used
        limit = min(cap, max_usage_tokens) if item.usage_only and max_usage_tokens else cap
        # exact when it fits; a huge block is known not to from a prefix alone
        whole.tokens = count_tokens_upto(block_text(whole), min(limit, left), encoding)
        if whole.tokens <= min(limit, left) and not item.outline_only:
            chosen.append(whole)
            used += whole.tokens + 1
            continue
        short = _first_fitting(item, lines, end, whole.score, min(cap, left), left, encoding)
        if short is not None:
            chosen.append(short)
            used += short.tokens + 1
            continue
        whole.tokens = count_tokens(block_text(whole), encoding)
        reason = f"over budget ({whole.tokens} tokens whole, {left} left)"
        dropped.append(Drop(item.path, item.start_line, end, reason, whole.score))
    return finish(chosen, dropped, budget, encoding)


def finish(chosen: list[Block], dropped: list[Drop], budget: int, encoding: str) -> Packed:
    """The context of ``chosen``, counted as a whole; the last blocks go (with a reason)
    until it fits, since joined blocks can tokenize differently."""
    context = render_context(chosen)
    tokens = count_tokens(context, encoding)
    while chosen and tokens > budget:
        last = chosen.pop()
        dropped.append(
            Drop(last.path, last.start_line, last.end_line, "over budget after join", last.score)
        )
        context = render_context(chosen)
        tokens = count_tokens(context, encoding)
    return Packed(blocks=chosen, context=context, tokens=tokens, dropped=dropped)
