import pytest

from greprag.fusion.fuse import fuse
from greprag.models import Candidate


def cand(path: str, start: int, end: int, route: str = "grep") -> Candidate:
    return Candidate(path=path, start_line=start, end_line=end, text="x", route=route)


def test_rrf_scores_follow_rank_within_one_route():
    fused = fuse({"grep": [cand("a.py", 1, 5), cand("b.py", 1, 5)]}, k=60)
    assert [c.path for c in fused] == ["a.py", "b.py"]
    assert fused[0].score == pytest.approx(1 / 61)
    assert fused[1].score == pytest.approx(1 / 62)
    assert {c.route for c in fused} == {"grep"}


def test_overlap_between_routes_reinforces_both():
    grep = [cand("a.py", 1, 5), cand("shared.py", 10, 20)]
    dense = [cand("d.py", 1, 9, "dense"), cand("shared.py", 15, 30, "dense")]
    fused = fuse({"grep": grep, "dense": dense}, k=60)
    shared = [c for c in fused if c.path == "shared.py"]
    assert {(c.start_line, c.route) for c in shared} == {(10, "grep+dense"), (15, "grep+dense")}
    assert all(c.score == pytest.approx(1 / 62 + 1 / 62) for c in shared)
    # rank 2 in both routes beats rank 1 in a single route
    assert [c.path for c in fused[:2]] == ["shared.py", "shared.py"]
    assert fused[2].score == pytest.approx(1 / 61)
    assert {c.route for c in fused[2:]} == {"grep", "dense"}


def test_disjoint_ranges_in_same_file_do_not_reinforce():
    fused = fuse({"grep": [cand("a.py", 1, 5)], "dense": [cand("a.py", 6, 9, "dense")]})
    assert [c.route for c in fused] == ["grep", "dense"]
    assert fused[0].score == pytest.approx(fused[1].score)


def test_weights_scale_a_route_and_best_line_counts_once():
    dense = [cand("a.py", 1, 3, "dense"), cand("a.py", 2, 8, "dense")]
    fused = fuse({"grep": [cand("a.py", 3, 3)], "dense": dense}, k=10, weights={"dense": 2.0})
    grep_hit = next(c for c in fused if c.start_line == 3 and c.end_line == 3)
    # line 3 is covered by dense ranks 1 and 2: only the best (2/11) is added
    assert grep_hit.score == pytest.approx(1 / 11 + 2 / 11)
    assert grep_hit.route == "grep+dense"


def test_inputs_are_not_mutated():
    original = cand("a.py", 1, 2)
    fuse({"grep": [original], "dense": [cand("a.py", 1, 2, "dense")]})
    assert original.score == 0.0 and original.route == "grep"
