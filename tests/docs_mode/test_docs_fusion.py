"""Fusion and packing of whole passages (``greprag.fusion.passages``)."""

from __future__ import annotations

from docs_mode.sections import Piece, Section
from greprag.fusion.passages import fuse_units, identifiers_first, pack_passages
from greprag.models import Candidate, Query, QueryPlan


def cand(path: str, start: int, end: int, route="grep", queries=(), score=0.0) -> Candidate:
    return Candidate(path, start, end, "", route, queries=tuple(queries), score=score)


def test_fusion_is_by_unit_identity_not_by_lines():
    grep = [cand("a.md", 10, 40, score=10.0), cand("b.md", 1, 9, score=5.0)]
    dense = [cand("c.md", 5, 6, "dense", score=0.8), cand("a.md", 10, 12, "dense", score=0.6)]
    fused = fuse_units(grep, dense, {}, dense_weight=0.5)
    assert [(c.path, c.start_line, c.end_line, c.route) for c in fused] == [
        ("a.md", 10, 40, "grep+dense"),  # grep's candidate kept: it carries the hits
        ("b.md", 1, 9, "grep"),
        ("c.md", 5, 6, "dense"),
    ]
    assert [c.score for c in fused] == [
        round(0.5 * 1.0 + 0.5 * 0.6, 6),
        round(0.5 * 0.5 + 0.5 * 0.6, 6),  # no cosine known: the lowest one known
        round(0.5 * 0.8, 6),
    ]
    assert grep[0].score == 10.0  # inputs are left as they were


def test_a_cosine_read_from_the_index_lifts_a_unit_grep_found():
    grep = [cand("a.md", 1, 5, score=10.0), cand("b.md", 1, 9, score=9.0)]
    dense = [cand("c.md", 1, 2, "dense", score=0.5)]
    plain = fuse_units(grep, dense, {})
    assert [c.path for c in plain][:2] == ["a.md", "b.md"]
    lifted = fuse_units(grep, dense, {("b.md", 1): 0.9, ("a.md", 1): 0.2})
    assert [c.path for c in lifted][:2] == ["b.md", "a.md"]


def test_every_candidate_of_every_route_is_fused_and_one_list_stays_as_it_is():
    grep = [cand("g.md", i, i, score=1.0 / i) for i in range(1, 301)]
    dense = [cand("d.md", i, i, "dense", score=0.5) for i in range(1, 151)]
    assert len(fuse_units(grep, dense, {}, dense_weight=0.3)) == 450
    assert fuse_units(grep, [], {}) == grep and fuse_units([], dense, {}) == dense


def test_units_with_the_exact_identifier_come_first_and_stay_in_order():
    plan = QueryPlan([Query("x", identifier="make_token", purpose="identifier"), Query("y")])
    ranked = [
        cand("a.md", 1, 1, queries=[1]),
        cand("b.md", 1, 1, queries=[0]),
        cand("c.md", 1, 1),
        cand("d.md", 1, 1, queries=[0, 1]),
    ]
    ranked = [
        Candidate(c.path, 1, 1, "", score=1 / (60 + i), queries=c.queries)
        for i, c in enumerate(ranked, 1)
    ]
    got = identifiers_first(ranked, plan)
    assert [c.path for c in got] == ["b.md", "d.md", "a.md", "c.md"]
    assert [c.score for c in got] == sorted((c.score for c in got), reverse=True)


def section(pieces: list[tuple[int, str]], end: int) -> Section:
    parts = tuple(Piece(line, text) for line, text in pieces)
    return Section("doc.md", pieces[0][0], end, ("Doc",), parts)


def test_a_section_too_big_for_its_share_goes_in_as_whole_pieces_around_the_hit():
    fence = "```\n" + "\n".join(f"step_{i} = run({i})" for i in range(40)) + "\n```"
    s = section([(1, "# Doc"), (2, "intro " * 60), (3, fence), (46, "after " * 60)], 46)
    hit = Candidate("doc.md", 1, 46, "", match_lines=(46,), score=0.5)
    packed = pack_passages(
        [(hit, s)], budget=1000, k=5, max_block_tokens=120, lines_of=lambda p: []
    )
    block = packed.blocks[0]
    assert (block.start_line, block.end_line) == (46, 46) and block.text == "after " * 60
    whole = pack_passages(
        [(hit, s)], budget=1000, k=5, max_block_tokens=1000, lines_of=lambda p: []
    )
    assert whole.blocks[0].text == s.text and whole.blocks[0].end_line == 46
    none = pack_passages(
        [(hit, section([(1, "x " * 400)], 1))],
        budget=1000,
        k=5,
        max_block_tokens=100,
        lines_of=lambda p: [],
    )
    assert not none.blocks and "over budget" in none.dropped[0].reason


def test_packing_stops_at_k_and_holds_the_budget():
    items = [
        (
            Candidate(f"{i}.md", 1, 1, "", score=1.0),
            Section(f"{i}.md", 1, 1, (), (Piece(1, f"text {i}"),)),
        )
        for i in range(10)
    ]
    packed = pack_passages(items, budget=4096, k=3, max_block_tokens=512, lines_of=lambda p: [])
    assert [b.path for b in packed.blocks] == ["0.md", "1.md", "2.md"]
    assert packed.dropped[0].reason == "k=3 blocks reached"
    tight = pack_passages(items, budget=30, k=10, max_block_tokens=512, lines_of=lambda p: [])
    assert tight.tokens <= 30
