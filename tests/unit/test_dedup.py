"""Merging ranges, the dedup pool and widening across statements."""

from __future__ import annotations

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
