"""Fusing and packing whole passages: documentation sections, docstrings, definitions.

Docs mode's routes rank units, not lines: a grep hit and a dense hit on one section are
the same candidate, whatever lines each reported. ``fuse_units`` is reciprocal-rank fusion
over unit identities (``path``, ``start_line``), every route's whole list taken.
``identifiers_first`` puts units where a question's exact identifier occurs ahead of the
rest, so no synonym or semantic near-miss outranks them. ``pack_passages`` packs the
best ``k`` within the budget: a passage whole; a section too big for its share as the
run of its paragraphs around the first hit that fits (never cut inside a piece, so never
inside a code fence); a definition as its outline.
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

RRF_K = 60


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
    route_candidates: dict[str, list[Candidate]],
    *,
    weights: dict[str, float] | None = None,
    k: int = RRF_K,
) -> list[Candidate]:
    """Every unit any route returned, by ``Σ weight / (k + rank)`` over the routes that
    returned it (its best rank in each). The candidate kept is the first route's that has
    it (grep's carries the matched lines); ``route`` names every route (``grep+dense``)."""
    weights = weights or {}
    score: dict[tuple[str, int], float] = {}
    kept: dict[tuple[str, int], Candidate] = {}
    routes: dict[tuple[str, int], list[str]] = {}
    for route, candidates in route_candidates.items():
        seen: set[tuple[str, int]] = set()
        for rank, cand in enumerate(candidates, 1):
            key = (cand.path, cand.start_line)
            if key in seen:
                continue
            seen.add(key)
            score[key] = score.get(key, 0.0) + weights.get(route, 1.0) / (k + rank)
            kept.setdefault(key, cand)
            routes.setdefault(key, []).append(route)
    order = {key: i for i, key in enumerate(kept)}
    ranked = sorted(kept, key=lambda key: (-score[key], order[key]))
    return [_rescored(kept[key], score[key], "+".join(routes[key])) for key in ranked]


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
    """``ranked`` with the units that contain more of the plan's exact identifiers first:
    each distinct identifier found adds 1 to the score (a fused score is below 1), so the
    order stays by score and, within a tier, the fused order holds."""
    exact = {i for i, q in enumerate(plan.queries) if q.purpose == "identifier"}
    if not exact:
        return list(ranked)
    names = {i: plan.queries[i].identifier for i in exact}
    tiered = []
    for cand in ranked:
        found = len({names[i] for i in cand.queries if i in exact})
        tiered.append(_rescored(cand, cand.score + found, cand.route) if found else cand)
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
