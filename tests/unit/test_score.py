"""The final score: BM25 against the window, normalized by the probes' best, plus priors."""

from __future__ import annotations

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


def test_long_similar_code_does_not_rescale_the_probes_ranking():
    weights = ScoreWeights()
    probes = [
        Candidate("loader.py", 1, 2, "def load_batch(self, index):\n    return rows", prior=0.9),
        *(
            Candidate(f"other{i}.py", 1, 1, f"def unrelated{i}(): pass", prior=1.0)
            for i in range(4)
        ),
    ]
    # the current file's next door: 30 lines of code much like the window
    similar = Candidate(
        "current.py", 40, 70, "\n".join([WINDOW] * 15), route=SIMILAR_ROUTE, prior=0.5
    )
    alone, joined = _score(probes), _score([*probes, similar])
    best = weights.bm25 + weights.prior * 0.9  # the probes' best BM25 takes the full weight
    assert alone["loader.py"] == pytest.approx(best)
    assert joined["loader.py"] == pytest.approx(best)
    assert joined["current.py"] <= weights.bm25 + weights.prior * 0.5 + 1e-9
