"""Structure-aware deduplication (the paper's second stage).

Take the top share of the ranked candidates, merge overlapping or adjacent line ranges
per file, extend each to whole syntactic blocks (lazily, as packing reaches them), and
merge again where the extended blocks meet. A merged block keeps the best score of its
members and remembers which lines matched, so packing can fall back to an outline that
still shows them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

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
    outline_only: bool = False
    usage_only: bool = False  # only usage probes hit it: its calls matter, not its body
    type_hop: bool = False  # a type the receiver at the cursor has: its members are wanted


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


def merge_ranges(candidates: list[Candidate], *, gap: int = 0) -> list[MergedRange]:
    """Merge overlapping/adjacent ranges per file; best score first.

    Ties go to more merged members, then path and line, so the order is deterministic.
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
    result = [item for ranges in per_file.values() for item in _merge_sorted(ranges, gap)]
    result.sort(key=lambda r: (-r.score, -r.members, r.path, r.start_line))
    return result


def _overlaps(emitted: list[MergedRange], start: int, end: int) -> bool:
    """Whether lines ``start``-``end`` overlap a block already emitted."""
    return any(e.start_line <= end and start <= e.end_line for e in emitted)


def _around(emitted: list[MergedRange], start: int, end: int) -> list[tuple[int, int]]:
    """The runs of lines ``start``-``end`` outside the blocks already emitted."""
    runs, at = [], start
    for e in sorted(emitted, key=lambda e: e.start_line):
        if e.end_line < at or e.start_line > end:
            continue
        if e.start_line > at:
            runs.append((at, e.start_line - 1))
        at = e.end_line + 1
    if at <= end:
        runs.append((at, end))
    return runs


class BlockExpansion:
    """Widen merged ranges to whole syntactic blocks, lazily, best first.

    Only ranges that packing actually reaches are parsed and widened, so a retrieval
    parses a handful of files instead of every file with a hit. A widened block absorbs
    the lower-ranked ranges of its file that it overlaps or touches; a range that falls
    inside a block already emitted is absorbed too. ``later`` ranges (the ranking past the
    pool) are reached only once every range before them was: they fill a budget the pool
    leaves unused, and no block before them absorbs them. Ranges of a held route
    (``hold``: similar code past its share) come after those, widened only then.
    """

    def __init__(
        self,
        ranges: list[MergedRange],
        expand: Expander,
        gap: int = 0,
        later: Callable[[], list[MergedRange]] | None = None,
    ) -> None:
        self._ranked = list(ranges)
        self._later = later
        self._next = 0  # ranges before it were taken or absorbed
        self._pending: dict[str, list[MergedRange]] = defaultdict(list)  # per file, ranked
        for item in self._ranked:
            self._pending[item.path].append(item)
        self._absorbed: set[int] = set()  # ids of ranges folded into an emitted block
        self._expand = expand
        self._gap = gap
        self._emitted: dict[str, list[MergedRange]] = defaultdict(list)
        self._held_route: str | None = None
        self._held: list[MergedRange] = []  # ranges of ``_held_route`` set aside, ranked

    def hold(self, route: str) -> None:
        """From now on, ranges of ``route`` alone wait, unwidened, until every other range
        was reached: similar code past its share of the budget seldom fits, and widening
        it parsed files for nothing. A held range absorbs nothing."""
        self._held_route = route

    def _touches(self, a: MergedRange, start: int, end: int) -> bool:
        return a.start_line <= end + 1 + self._gap and start <= a.end_line + 1 + self._gap

    def __iter__(self):
        while self._next < len(self._ranked) or self._reach_later() or self._reach_held():
            item = self._ranked[self._next]
            self._next += 1
            if id(item) in self._absorbed:
                continue
            self._pending[item.path].pop(0)  # it is the best one left of its file
            if item.route == self._held_route:
                self._held.append(item)
                continue
            emitted = self._emitted[item.path]
            if any(
                e.start_line <= item.start_line and item.end_line <= e.end_line for e in emitted
            ):
                continue
            lo, hi = (
                (min(item.match_lines), max(item.match_lines))
                if item.match_lines
                else (item.start_line, item.end_line)
            )
            start, end = self._expand(item.path, lo, hi)
            following: list[tuple[int, int]] = []
            if _overlaps(emitted, start, end):
                # widening would swallow a block already packed: keep the hit lines only,
                # shown as an outline so nothing is cut mid-function; the receiver's type
                # keeps its whole block, outlined (its members' signatures) in the pieces
                # around the blocks packed, which packing joins back (``pack``)
                item.outline_only = True
                pieces = _around(emitted, start, end) if item.type_hop else []
                if pieces:
                    (start, end), following = pieces[0], pieces[1:]
                else:
                    start, end = item.start_line, item.end_line
            item.start_line, item.end_line = start, end
            while self._absorb(item) and not item.outline_only:
                # a touching range stuck out of the block: widen the union again, so the
                # block still ends where a unit ends (or show it as an outline)
                start, end = self._expand(item.path, item.start_line, item.end_line)
                if _overlaps(emitted, start, end):
                    item.outline_only = True
                else:
                    item.start_line, item.end_line = start, end
            emitted.append(item)
            yield item
            for start, end in following:
                piece = replace(
                    item,
                    start_line=start,
                    end_line=end,
                    match_lines=set(),
                    queries=set(item.queries),
                )
                emitted.append(piece)
                yield piece

    def _reach_later(self) -> bool:
        """Queue the ``later`` ranges (once); True when that gave more to take."""
        if self._later is None:
            return False
        later, self._later = self._later(), None
        return self._queue(later)

    def _reach_held(self) -> bool:
        """Queue the held ranges (once, after everything else); True when that gave more."""
        if self._held_route is None:
            return False
        held, self._held_route, self._held = self._held, None, []
        return self._queue(held)

    def _queue(self, ranges: list[MergedRange]) -> bool:
        """``ranges`` (ranked), cut clear of the blocks emitted, queued to be reached after
        those queued already; True when any was left to take."""
        more = [piece for item in ranges for piece in self._clear_of_emitted(item)]
        self._ranked += more
        for item in more:
            self._pending[item.path].append(item)
        return bool(more)

    def _clear_of_emitted(self, item: MergedRange) -> list[MergedRange]:
        """``item`` cut to its runs of hit lines outside the blocks already emitted: a
        later range may reach into one, since none absorbed it."""
        emitted = self._emitted[item.path]
        if not any(self._touches(e, item.start_line, item.end_line) for e in emitted):
            return [item]
        pieces: list[MergedRange] = []
        for lo, hi in _around(emitted, item.start_line, item.end_line):
            hits = {n for n in item.match_lines if lo <= n <= hi}
            if hits:
                first, last = min(hits), max(hits)
                queries = set(item.queries)
                pieces.append(
                    replace(
                        item, start_line=first, end_line=last, match_lines=hits, queries=queries
                    )
                )
        return pieces

    def _absorb(self, item: MergedRange) -> bool:
        """Fold the pending ranges of ``item``'s file that overlap or touch it into it;
        True when that made it longer."""
        before = (item.start_line, item.end_line)
        keep = []
        for other in self._pending[item.path]:
            if self._touches(other, item.start_line, item.end_line):
                item.start_line = min(item.start_line, other.start_line)
                item.end_line = max(item.end_line, other.end_line)
                item.match_lines |= other.match_lines
                item.queries |= other.queries
                item.members += other.members
                item.usage_only = item.usage_only and other.usage_only
                item.type_hop = item.type_hop or other.type_hop
                self._absorbed.add(id(other))
            else:
                keep.append(other)
        self._pending[item.path] = keep
        return (item.start_line, item.end_line) != before

    def emitted(self) -> list[MergedRange]:
        """The blocks produced so far, best first."""
        return sorted(
            (r for ranges in self._emitted.values() for r in ranges), key=lambda r: -r.score
        )

    def remaining(self) -> list[MergedRange]:
        """Ranges never reached (packing stopped first)."""
        return [r for r in self._ranked[self._next :] if id(r) not in self._absorbed]

    def held(self) -> list[MergedRange]:
        """Ranges held (``hold``) and never reached."""
        return list(self._held)


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
