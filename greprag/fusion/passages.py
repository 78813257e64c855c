"""Fusing and packing whole passages: documentation sections, docstrings, definitions.

Docs mode's routes rank units, not lines: a grep hit and a dense hit on one section are
the same candidate, whatever lines each reported. ``fuse_units`` mixes the two routes'
evidence per unit identity (``path``, ``start_line``): grep's BM25 over the whole unit,
scaled to the best one, and the question's cosine with the unit, known for every dense
hit and read from the index for grep's best units, so a unit both routes like wins over
one only a single route likes (measured against reciprocal-rank fusion, which can only
see ranks: docs/benchmarks.md, "Docs mode"). ``identifiers_first`` puts units where a
question's exact identifier occurs ahead of the rest, so no synonym or semantic near-miss
outranks them. ``pack_passages`` packs the best ``k`` within the budget: a passage whole;
a section too big for its share as the run of its paragraphs around the first hit that
fits (never cut inside a piece, so never inside a code fence); a definition as its outline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Protocol

from greprag.fusion.dedup import MergedRange
from greprag.fusion.pack import MIN_USEFUL_TOKENS, LinesOf, Packed, finish, shortened_forms
from greprag.models import Block, Candidate, Drop, QueryPlan
from greprag.render import block_text
from greprag.tokens import count_tokens

__all__ = ["Passage", "fuse_units", "identifiers_first", "pack_passages"]

DENSE_WEIGHT = 0.5  # the cosine's share of a fused score (the docs profile's dense_weight)


class PieceLike(Protocol):
    line: int
    text: str


class Passage(Protocol):
    """What packing needs of a unit (``docs_mode.sections.Section`` is one)."""

    path: str
    start_line: int
    end_line: int
    kind: str
    anchor: str | None
    pieces: tuple[PieceLike, ...]

    @property
    def text(self) -> str: ...


def fuse_units(
    grep: list[Candidate],
    dense: list[Candidate],
    cosines: dict[tuple[str, int], float],
    *,
    dense_weight: float = DENSE_WEIGHT,
) -> list[Candidate]:
    """Every unit of both routes by ``(1 - w) × BM25 / best BM25 + w × cosine``.

    ``cosines`` holds the question's cosine with units grep found (their stored vectors),
    ``dense``'s scores are cosines too; a unit with no known cosine gets the lowest one
    known (it was not among the nearest), a unit grep did not find BM25 0 (it holds no
    term). The candidate kept is grep's when it has one (it carries the matched lines);
    ``route`` names the routes that returned the unit (``grep+dense``). With one list,
    that list as it is.
    """
    if not dense or not grep:
        return list(grep or dense)
    known = {**cosines, **{(c.path, c.start_line): c.score for c in dense}}
    floor = min(known.values())
    top = max(c.score for c in grep) or 1.0
    fused: dict[tuple[str, int], tuple[float, Candidate, str]] = {}
    in_dense = {(c.path, c.start_line) for c in dense}
    for cand in grep:
        key = (cand.path, cand.start_line)
        if key not in fused:
            lexical = (1 - dense_weight) * cand.score / top
            route = "grep+dense" if key in in_dense else "grep"
            fused[key] = (lexical + dense_weight * known.get(key, floor), cand, route)
    for cand in dense:
        key = (cand.path, cand.start_line)
        if key not in fused:
            fused[key] = (dense_weight * cand.score, cand, "dense")
    order = {key: i for i, key in enumerate(fused)}
    ranked = sorted(fused, key=lambda key: (-fused[key][0], order[key]))
    return [_rescored(fused[key][1], fused[key][0], fused[key][2]) for key in ranked]


def _rescored(c: Candidate, score: float, route: str) -> Candidate:
    """A copy of ``c`` with a new score and route (``dataclasses.replace`` costs 6× more,
    and fusion copies every unit every route found)."""
    return Candidate(
        c.path,
        c.start_line,
        c.end_line,
        c.text,
        route,
        c.query_index,
        c.match_lines,
        round(score, 6),
        c.queries,
        c.prior,
    )


def identifiers_first(ranked: list[Candidate], plan: QueryPlan) -> list[Candidate]:
    """``ranked`` with the units that contain more of the plan's exact identifiers first.
    Each distinct identifier found adds more than any score in the list, so the order
    stays by score, and within a tier the order ``ranked`` had holds."""
    exact = {i for i, q in enumerate(plan.queries) if q.purpose == "identifier"}
    if not exact:
        return list(ranked)
    names = {i: plan.queries[i].identifier for i in exact}
    step = 1.0 + max((c.score for c in ranked), default=0.0)
    tiered = []
    for cand in ranked:
        found = len({names[i] for i in cand.queries if i in exact})
        tiered.append(_rescored(cand, cand.score + found * step, cand.route) if found else cand)
    return sorted(tiered, key=lambda c: -c.score)


def _fitting_run(
    passage: Passage, hits: Iterable[int], limit: int, measure: Callable[[Block], int], base: Block
) -> Block | None:
    """The longest run of whole pieces, from the piece of the first hit forward, then
    back, whose block fits ``limit`` tokens."""
    pieces = passage.pieces
    first_hit = min(hits, default=passage.start_line)
    at = max((i for i, p in enumerate(pieces) if p.line <= first_hit), default=0)

    def block(lo: int, hi: int) -> Block:
        end = pieces[hi + 1].line - 1 if hi + 1 < len(pieces) else passage.end_line
        text = "\n".join(p.text for p in pieces[lo : hi + 1])
        made = replace(base, start_line=pieces[lo].line, end_line=max(end, pieces[lo].line))
        made.text = text
        made.tokens = measure(made)
        return made

    best = block(at, at)
    if best.tokens > limit:
        return None
    lo, hi = at, at
    while hi + 1 < len(pieces) and (wider := block(lo, hi + 1)).tokens <= limit:
        best, hi = wider, hi + 1
    while lo > 0 and (wider := block(lo - 1, hi)).tokens <= limit:
        best, lo = wider, lo - 1
    return best


def _outline(
    passage: Passage, cand: Candidate, lines_of: LinesOf, limit: int, measure
) -> Block | None:
    """A definition too big to go whole: its outline or signature and hit lines."""
    lines = lines_of(passage.path)
    end = min(passage.end_line, len(lines))
    item = MergedRange(
        passage.path, passage.start_line, end, cand.score, cand.route, set(cand.match_lines)
    )
    for text in shortened_forms(passage.path, lines, item):
        block = Block(passage.path, passage.start_line, end, text, cand.score, cand.route)
        block.outline = True
        block.tokens = measure(block)
        if block.tokens <= limit:
            return block
    return None


def pack_passages(
    ranked: Iterable[tuple[Candidate, Passage]],
    *,
    budget: int,
    k: int,
    max_block_tokens: int,
    lines_of: LinesOf,
    encoding: str = "cl100k_base",
) -> Packed:
    """At most ``k`` blocks, best first, within ``budget`` tokens (see the module doc)."""

    def measure(block: Block) -> int:
        return count_tokens(block_text(block), encoding)

    chosen: list[Block] = []
    dropped: list[Drop] = []
    used = 0
    for cand, passage in ranked:
        left = budget - used
        if len(chosen) >= k or left < MIN_USEFUL_TOKENS:
            reason = f"k={k} blocks reached" if len(chosen) >= k else "budget full"
            dropped.append(
                Drop(cand.path, passage.start_line, passage.end_line, reason, cand.score)
            )
            break
        whole = Block(
            passage.path,
            passage.start_line,
            passage.end_line,
            passage.text,
            cand.score,
            cand.route,
            anchor=passage.anchor,
        )
        whole.tokens = measure(whole)
        limit = min(max_block_tokens, left)
        block: Block | None = whole if whole.tokens <= limit else None
        if block is None and passage.kind == "definition":
            block = _outline(passage, cand, lines_of, limit, measure)
        elif block is None:
            block = _fitting_run(passage, cand.match_lines, limit, measure, whole)
        if block is None:
            reason = f"over budget ({whole.tokens} tokens whole, {left} left)"
            dropped.append(
                Drop(cand.path, passage.start_line, passage.end_line, reason, cand.score)
            )
            continue
        chosen.append(block)
        used += block.tokens + 1
    return finish(chosen, dropped, budget, encoding)
