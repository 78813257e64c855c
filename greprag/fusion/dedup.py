"""Structure-aware deduplication (the paper's second stage).

Take the top share of the ranked candidates, merge overlapping or adjacent line ranges
per file, extend each to whole syntactic blocks, and merge again where the extended
blocks meet. A merged block keeps the best score of its members and remembers which
lines matched, so packing can fall back to an outline that still shows them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from greprag.models import Candidate

# (path, start, end) -> (start, end): widens a range to whole syntactic units.
Expander = Callable[[str, int, int], tuple[int, int]]


@dataclass
class MergedRange:
    path: str
    start_line: int
    end_line: int
    score: float
    route: str
    match_lines: set[int] = field(default_factory=set)
    queries: set[int] = field(default_factory=set)
    members: int = 1


def take_pool(ranked: list[Candidate], share: float, minimum: int = 8) -> list[Candidate]:
    """The top ``share`` of a ranked list (at least ``minimum``, at most all)."""
    if share >= 1.0:
        return list(ranked)
    size = max(min(minimum, len(ranked)), math.ceil(len(ranked) * share))
    return ranked[:size]


def _merge_sorted(ranges: list[MergedRange], gap: int) -> list[MergedRange]:
    merged: list[MergedRange] = []
    for item in sorted(ranges, key=lambda r: (r.start_line, r.end_line)):
        if merged and item.start_line <= merged[-1].end_line + 1 + gap:
            last = merged[-1]
            last.end_line = max(last.end_line, item.end_line)
            last.score = max(last.score, item.score)
            last.match_lines |= item.match_lines
            last.queries |= item.queries
            last.members += item.members
            if item.route != last.route and item.route not in last.route.split("+"):
                last.route = "+".join(sorted(set(last.route.split("+")) | {item.route}))
        else:
            merged.append(item)
    return merged


def merge_ranges(
    candidates: list[Candidate], *, gap: int = 0, expand: Expander | None = None
) -> list[MergedRange]:
    """Merge overlapping/adjacent ranges per file, widen them with ``expand``, merge again.

    Returned best score first (ties: more merged members first, then path and line).
    """
    per_file: dict[str, list[MergedRange]] = defaultdict(list)
    for c in candidates:
        per_file[c.path].append(
            MergedRange(
                path=c.path,
                start_line=c.start_line,
                end_line=c.end_line,
                score=c.score,
                route=c.route,
                match_lines=set(c.match_lines),
                queries=set(c.queries) or {c.query_index},
            )
        )
    result: list[MergedRange] = []
    for path, ranges in per_file.items():
        merged = _merge_sorted(ranges, gap)
        if expand is not None:
            for item in merged:
                item.start_line, item.end_line = expand(path, item.start_line, item.end_line)
            merged = _merge_sorted(merged, gap)
        result.extend(merged)
    result.sort(key=lambda r: (-r.score, -r.members, r.path, r.start_line))
    return result


def no_dedup(candidates: list[Candidate]) -> list[MergedRange]:
    """Each candidate as its own range (the paper's Naive GrepRAG and the no-dedup ablation)."""
    return [
        MergedRange(
            path=c.path,
            start_line=c.start_line,
            end_line=c.end_line,
            score=c.score,
            route=c.route,
            match_lines=set(c.match_lines),
            queries=set(c.queries) or {c.query_index},
        )
        for c in candidates
    ]
