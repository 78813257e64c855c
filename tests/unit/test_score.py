"""The final score: BM25 against the window, normalized by the probes' best, plus priors."""

from __future__ import annotations

from dataclasses import replace

import pytest

from greprag.fusion.score import ScoreWeights, score_candidates
from greprag.models import SIMILAR_ROUTE, Candidate, QueryPlan

WINDOW = "rows = self.loader.load_batch(index)\nfor step in self.transforms:"


def _score(candidates: list[Candidate]) -> dict[str, float]:
    ranked = score_candidates(
        candidates,
        window=WINDOW,
        plan=QueryPlan(queries=[]),
        imported={},
        method="bm25",
        weights=ScoreWeights(),
    )
    return {c.path: c.score for c in ranked}


def test_code_offered_without_a_match_does_not_rescale_the_ranking():
    weights = ScoreWeights()
    hits = [
        Candidate(
            "loader.py",
            1,
            2,
            "def load_batch(self, index):\n    return rows",
            prior=0.9,
            match_lines=(1,),
        ),
        *(
            Candidate(
                f"other{i}.py", 1, 1, f"def unrelated{i}(): pass", prior=1.0, match_lines=(1,)
            )
            for i in range(4)
        ),
    ]
    # the current file's next door: 30 lines much like the window, offered for nearness
    next_door = Candidate(
        "current.py", 40, 70, "\n".join([WINDOW] * 15), route=SIMILAR_ROUTE, prior=0.5
    )
    alone, joined = _score(hits), _score([*hits, next_door])
    best = weights.bm25 + weights.prior * 0.9  # the best match's BM25 takes the full weight
    assert alone["loader.py"] == pytest.approx(best)
    assert joined["loader.py"] == pytest.approx(best)
    assert joined["current.py"] == pytest.approx(weights.bm25 + weights.prior * 0.5)
    # a similar region that matched sets the scale like any hit
    region = replace(next_door, match_lines=(40,))
    assert _score([*hits, region])["loader.py"] < best
