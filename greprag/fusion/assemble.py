"""From ranked candidates to the packed context: pool → merge → widen → pack.

The top ``dedup_pool`` share of the ranking enters dedup (similar code, already the few best
regions, enters whole); ranges are merged per file, widened to whole blocks lazily (only
as packing reaches them) and packed best first into the budget. The ranking past the
pool, merged on its own, follows: it is reached only when the pool leaves budget unused.
Lines of the file under the cursor are admitted only where ``CursorFile`` says. With
``dedup`` off every candidate is packed as its own range (the paper's Naive GrepRAG and
the no-dedup ablation).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial

from greprag.config import Settings
from greprag.cursor_file import CursorFile
from greprag.fusion.dedup import (
    BlockExpansion,
    Expander,
    MergedRange,
    merge_ranges,
    no_dedup,
    take_pool,
)
from greprag.fusion.pack import LinesOf, Packed, pack
from greprag.models import SIMILAR_ROUTE, Candidate, Drop, QueryPlan

__all__ = ["MIN_BLOCK_CAP", "Assembly", "assemble"]

MIN_BLOCK_CAP = 256  # small budgets still take a whole block that fits


@dataclass
class Assembly:
    """The packed context and the merged blocks that packing reached (for ``--explain``)."""

    packed: Packed
    emitted: list[MergedRange]


def _usage_only(item: MergedRange, plan: QueryPlan) -> bool:
    """Only usage probes hit the range: its call sites matter, not its body."""
    return bool(item.queries) and all(
        0 <= i < len(plan.queries) and plan.queries[i].purpose == "usage" for i in item.queries
    )


def _pool(ranked: list[Candidate], share: float) -> tuple[list[Candidate], list[Candidate]]:
    """The top ``share`` of the probes' candidates and every similar-code candidate (the
    route sends only its best regions), best first; and the probes' candidates past it."""
    probed = [c for c in ranked if c.route != SIMILAR_ROUTE]
    pool = take_pool(probed, share)
    rest = probed[len(pool) :]
    pool += [c for c in ranked if c.route == SIMILAR_ROUTE]
    return sorted(pool, key=lambda c: -c.score), rest


def _admitted(ranges: list[MergedRange], current: CursorFile) -> list[MergedRange]:
    """The current file's ranges clipped to its admitted lines, or dropped."""
    kept = []
    for r in ranges:
        if r.path == current.path:
            start, end = current.clip(r.path, r.start_line, r.end_line)
            if end < start:
                continue
            r = replace(r, start_line=start, end_line=end)
        kept.append(r)
    return kept


def assemble(
    ranked: list[Candidate],
    *,
    plan: QueryPlan,
    settings: Settings,
    lines_of: LinesOf,
    expand: Expander,
    current: CursorFile,
    twin: str | None = None,
) -> Assembly:
    """Pack ``ranked`` (best first) within ``settings.budget`` tokens; ``twin``: the
    function an empty body writes, whose same-named definitions show whole."""
    s = settings
    expansion: BlockExpansion | None = None
    if s.dedup:
        pool, rest = _pool(ranked, s.dedup_pool)

        def merged(candidates: list[Candidate]) -> list[MergedRange]:
            ranges = merge_ranges(candidates, gap=s.merge_gap)
            for item in ranges:  # merge_ranges made these: set in place, no copies
                item.usage_only = _usage_only(item, plan)
                item.type_hop = any(
                    0 <= i < len(plan.queries) and plan.queries[i].purpose == "second hop"
                    for i in item.queries
                )
            return _admitted(ranges, current)

        expansion = BlockExpansion(
            merged(pool), expand, gap=s.merge_gap, later=lambda: merged(rest)
        )
        ranges: Iterable[MergedRange] = expansion
    else:
        ranges = _admitted(no_dedup(ranked), current)
    packed = pack(
        ranges,
        lines_of,
        budget=s.budget,
        max_block_tokens=max(MIN_BLOCK_CAP, int(s.budget * s.max_block_share)),
        max_usage_tokens=s.max_usage_tokens,
        encoding=s.encoding,
        compact_after=int(s.budget * s.compact_after_share),
        compact_tokens=s.compact_tokens,
        similar_share=s.similar_share,
        similar_full=None if expansion is None else partial(expansion.hold, SIMILAR_ROUTE),
        twin=twin,
    )
    if expansion is None:
        return Assembly(packed, [])
    packed.dropped += [
        Drop(r.path, r.start_line, r.end_line, "budget full", round(r.score, 4))
        for r in expansion.remaining()
    ]
    packed.dropped += [
        Drop(r.path, r.start_line, r.end_line, "similar code past its share", round(r.score, 4))
        for r in expansion.held()
    ]
    return Assembly(packed, expansion.emitted())
