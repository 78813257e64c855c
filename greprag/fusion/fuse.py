"""Cross-route fusion: reciprocal-rank fusion over line identities.

A route ranks candidates; each candidate contributes ``weight / (k + rank)`` to every
line ``(path, line)`` it covers (a route's best contribution per line counts). A
candidate's fused score is its own contribution plus, for every other route, the best
contribution that route made to any of its lines: ranges from two routes that overlap
reinforce each other, whatever their raw score scales.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from greprag.models import Candidate

RRF_K = 60


def _line_scores(
    route_candidates: dict[str, list[Candidate]], k: int, weights: dict[str, float]
) -> dict[str, dict[tuple[str, int], float]]:
    scores: dict[str, dict[tuple[str, int], float]] = {}
    for route, candidates in route_candidates.items():
        lines: dict[tuple[str, int], float] = defaultdict(float)
        for rank, cand in enumerate(candidates, 1):
            value = weights.get(route, 1.0) / (k + rank)
            for line in range(cand.start_line, cand.end_line + 1):
                lines[(cand.path, line)] = max(lines[(cand.path, line)], value)
        scores[route] = lines
    return scores


def fuse(
    route_candidates: dict[str, list[Candidate]],
    *,
    k: int = RRF_K,
    weights: dict[str, float] | None = None,
) -> list[Candidate]:
    """All candidates of all routes (each list best first), sorted by fused score.

    ``Candidate.score`` becomes the fused score and ``route`` names every route that
    covered one of its lines (``grep``, ``dense``, ``grep+dense``).
    """
    weights = weights or {}
    lines = _line_scores(route_candidates, k, weights)
    fused: list[tuple[float, int, Candidate]] = []
    order = 0
    for route, candidates in route_candidates.items():
        for rank, cand in enumerate(candidates, 1):
            score = weights.get(route, 1.0) / (k + rank)
            names = [route]
            for other, other_lines in lines.items():
                if other == route:
                    continue
                best = max(
                    (
                        other_lines.get((cand.path, n), 0.0)
                        for n in range(cand.start_line, cand.end_line + 1)
                    ),
                    default=0.0,
                )
                if best > 0:
                    score += best
                    names.append(other)
            label = "+".join(r for r in route_candidates if r in names)
            fused.append((score, order, replace(cand, score=score, route=label)))
            order += 1
    fused.sort(key=lambda item: (-item[0], item[1]))
    return [cand for _, _, cand in fused]
