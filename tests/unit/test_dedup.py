"""Merging ranges, the dedup pool and widening across statements."""

from __future__ import annotations

from dataclasses import replace

from greprag.fusion.dedup import merge_ranges, take_pool
from greprag.models import Candidate


def test_overlapping_and_adjacent_ranges_merge_and_keep_the_best_score():
    cands = [
        Candidate("a.py", 10, 14, "", score=0.5, match_lines=(12,)),
        Candidate("a.py", 13, 18, "", score=0.9, match_lines=(15,)),
        Candidate("a.py", 19, 20, "", score=0.1, match_lines=(19,)),
        Candidate("a.py", 40, 44, "", score=0.7, match_lines=(42,)),
        Candidate("b.py", 10, 14, "", score=0.8, match_lines=(12,)),
    ]
    merged = merge_ranges(cands, gap=0)
    spans = [(m.path, m.start_line, m.end_line, m.score) for m in merged]
    assert spans == [("a.py", 10, 20, 0.9), ("b.py", 10, 14, 0.8), ("a.py", 40, 44, 0.7)]
    assert merged[0].match_lines == {12, 15, 19}


def test_the_pool_is_the_top_half_with_a_floor():
    ranked = [Candidate("a.py", i, i, "") for i in range(1, 41)]
    assert len(take_pool(ranked, 0.5)) == 20 and len(take_pool(ranked[:6], 0.5)) == 6


def test_widening_covers_every_statement_between_the_first_and_last_hit():
    from greprag.syntax.scan import LocalExpander

    lines = [
        "import x",
        "",
        "A = int",
        "B = str",
        "C = list[",
        "    int,",
        "]",
        "",
        "def f():",
        "    return 1",
    ]
    assert LocalExpander().expand("t.py", lines, "python", 3, 6) == (3, 7)
    assert LocalExpander().expand("t.py", lines, "python", 10, 10) == (9, 10)


ENGINE = [
    "class Engine:",  # 1
    "    def start(self):",
    "        self.on = True",
    "",
    "    def stop(self):",  # 5
    "        self.on = False",
    "        return self",
    "",
    "",
    "def run(engine):",  # 10
    "    engine.start()",
    "    return engine.stop()",
]


def test_a_range_touching_a_widened_block_is_widened_with_it_never_cut():
    from greprag.fusion.dedup import BlockExpansion, MergedRange
    from greprag.syntax import BlockWidener

    first = MergedRange("e.py", 5, 5, 0.9, "grep", match_lines={5})
    touching = MergedRange("e.py", 8, 10, 0.5, "similar", match_lines={10})
    widen = BlockWidener(lambda _path: ENGINE * 8)  # a file too long to take whole
    blocks = list(BlockExpansion([first, touching], widen, gap=1))
    assert len(blocks) == 1
    # stop() touched run()'s first line: the block takes run() whole, and with it the class
    # stop() sits in, so it neither ends at a def line nor leaves the class half open
    assert (blocks[0].start_line, blocks[0].end_line) == (1, 12)


def test_ranges_past_the_pool_come_last_are_made_only_when_reached_and_are_not_absorbed():
    from greprag.fusion.dedup import BlockExpansion, MergedRange
    from greprag.syntax import BlockWidener

    made: list[str] = []

    def later() -> list[MergedRange]:
        made.append("later")
        return [
            # reaches into the block of stop() (5-7): only its hit past it is left
            MergedRange("e.py", 6, 11, 0.2, "grep", match_lines={6, 11}),
            MergedRange("f.py", 2, 2, 0.1, "grep", match_lines={2}),
        ]

    widen = BlockWidener(lambda _path: ENGINE * 8)
    expansion = BlockExpansion(
        [MergedRange("e.py", 5, 5, 0.9, "grep", match_lines={5})], widen, later=later
    )
    blocks = iter(expansion)
    first = next(blocks)
    assert made == [] and (first.start_line, first.end_line) == (5, 7)  # stop() alone
    rest = list(blocks)
    assert made == ["later"]
    assert [(b.path, b.start_line, b.end_line) for b in rest] == [("e.py", 10, 12), ("f.py", 2, 3)]


def test_held_ranges_wait_unwidened_absorb_nothing_and_come_after_everything_else():
    """Similar code past its share of the budget is held (``BlockExpansion.hold``): its
    files are not parsed while other ranges remain, and a range it would have absorbed
    gets its own block."""
    from greprag.fusion.dedup import BlockExpansion, MergedRange
    from greprag.syntax import BlockWidener

    widened: list[str] = []
    widen = BlockWidener(lambda _path: ENGINE * 8)

    def tracking(path: str, start: int, end: int) -> tuple[int, int]:
        widened.append(path)
        return widen(path, start, end)

    expansion = BlockExpansion(
        [
            MergedRange("a.py", 5, 5, 0.9, "grep", match_lines={5}),
            MergedRange("s.py", 10, 10, 0.8, "similar", match_lines={10}),
            MergedRange("e.py", 10, 10, 0.7, "similar", match_lines={10}),
            MergedRange("e.py", 11, 11, 0.6, "grep", match_lines={11}),
        ],
        tracking,
        gap=1,
        later=lambda: [MergedRange("f.py", 2, 2, 0.1, "grep", match_lines={2})],
    )
    blocks = iter(expansion)
    assert next(blocks).path == "a.py"
    expansion.hold("similar")
    rest = [(b.path, b.route) for b in blocks]
    # e.py's grep hit is no longer folded into the similar range above it; the held
    # ranges come after the ranking past the pool, widened only then
    assert rest == [("e.py", "grep"), ("f.py", "grep"), ("s.py", "similar")]
    assert widened.index("s.py") > widened.index("f.py")
    assert expansion.held() == [] and expansion.remaining() == []
    # the similar hit on e.py's line 10 lies in the grep block made of line 11: absorbed
    assert not any(b.path == "e.py" and b.route == "similar" for b in expansion.emitted())


def test_held_ranges_never_reached_are_reported_as_held():
    from greprag.fusion.dedup import BlockExpansion, MergedRange

    expansion = BlockExpansion(
        [
            MergedRange("a.py", 1, 1, 0.9, "grep", match_lines={1}),
            MergedRange("s.py", 3, 3, 0.8, "similar", match_lines={3}),
            MergedRange("b.py", 1, 1, 0.7, "grep", match_lines={1}),
        ],
        lambda _path, start, end: (start, end),
    )
    blocks = iter(expansion)
    next(blocks)
    expansion.hold("similar")
    assert next(blocks).path == "b.py"  # packing stops here: the budget is full
    assert [r.path for r in expansion.held()] == ["s.py"] and expansion.remaining() == []


def test_a_later_hit_on_the_line_just_past_a_block_gets_its_own_block():
    """A def starting right after an emitted block (``_has_varargs`` after
    ``check_varargs``) is a unit of its own, not part of that block: its hit is kept."""
    from greprag.fusion.dedup import BlockExpansion, MergedRange
    from greprag.syntax import BlockWidener

    adjacent = ["def check():", "    return 1", "def has_varargs():", "    return 2"]
    widen = BlockWidener(lambda _path: adjacent * 8)
    expansion = BlockExpansion(
        [MergedRange("e.py", 1, 1, 0.9, "grep", match_lines={1})],
        widen,
        later=lambda: [MergedRange("e.py", 1, 3, 0.2, "grep", match_lines={1, 3})],
    )
    assert [(b.start_line, b.end_line) for b in expansion] == [(1, 2), (3, 4)]


def test_the_receivers_type_overlapping_a_packed_member_is_outlined_around_it():
    """The class a type hop found, with its method stop() (5-6) packed first: the class
    is not cut to its hit line but outlined in the pieces around stop()."""
    from greprag.fusion.dedup import BlockExpansion, MergedRange
    from greprag.syntax import BlockWidener

    engine = [
        *ENGINE[:6],
        "",
        "    def reset(self):",
        "        self.on = None",
        "",
        "",
        "def run():",
        "    return 1",
    ]
    widen = BlockWidener(lambda _path: engine * 8)
    hop = MergedRange("e.py", 1, 1, 0.8, "grep", match_lines={1}, type_hop=True)
    ranges = [MergedRange("e.py", 5, 5, 0.9, "grep", match_lines={5}), hop]
    blocks = [(b.start_line, b.end_line, b.outline_only) for b in BlockExpansion(ranges, widen)]
    assert blocks == [(5, 6, False), (1, 4, True), (7, 9, True)]
    plain = replace(hop, type_hop=False, start_line=1, end_line=1, match_lines={1})
    cut = [(b.start_line, b.end_line) for b in BlockExpansion([ranges[0], plain], widen)]
    assert cut == [(5, 6), (1, 1)]
