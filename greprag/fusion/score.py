"""The final score of a route's candidates: re-ranking against the window, the router's
prior, and bonuses for where the imports point.

``score = bm25 × min(1, BM25(candidate, window) / best BM25) + prior × router prior``,
where the best BM25 is that of the candidates that matched something (the current file's
next door, offered for its nearness, would otherwise often set the scale and rescale
the whole ranking); plus
``import_bonus`` for a definition found exactly where the probed name's import points
(``PACKAGE_SHARE`` of it for a Java class found in the file's own package, which needs no
import: the folder of a package may recur in several modules),
``definition_bonus`` for hits of definition probes, and ``shape_bonus`` for a usage hit
whose line has the cursor line's code just before a probed name the window has not
written yet (the statement being written, as written elsewhere). The weights were tuned
on the benchmark (docs/benchmarks.md); ``rerank = "jaccard"`` ranks by Jaccard alone (the
paper's Naive GrepRAG), ``none`` by the prior alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from greprag.config import Settings
from greprag.fusion.bm25 import candidate_scores, rerank
from greprag.imports import PackageScope
from greprag.languages import IDENTIFIER_RE
from greprag.models import Candidate, Query, QueryPlan

__all__ = ["ScoreWeights", "points_to", "score_candidates"]

PACKAGE_SHARE = 0.25  # of the import bonus (tuned: a half, or all, lost line tasks)


@dataclass(frozen=True)
class ScoreWeights:
    """How the final score mixes its parts (see the module docstring)."""

    bm25: float = 0.2
    prior: float = 0.8
    import_bonus: float = 0.35
    definition_bonus: float = 0.0
    shape_bonus: float = 0.2  # tuned: 0.35 cost a Python gold and a Java import task

    @classmethod
    def from_settings(cls, settings: Settings) -> ScoreWeights:
        return cls(
            settings.bm25_weight,
            settings.prior_weight,
            settings.import_bonus,
            settings.definition_bonus,
        )

    def mixed(self, bm25_share: float | None) -> ScoreWeights:
        """These weights with BM25 taking ``bm25_share`` of the BM25 and prior weights'
        sum (a language's own mix, ``Language.bm25_share``); as they are for None."""
        if bm25_share is None:
            return self
        total = self.bm25 + self.prior
        return replace(self, bm25=total * bm25_share, prior=total * (1 - bm25_share))


def points_to(path: str, query: Query, imported: dict[str, str]) -> bool:
    """Whether the file's imports point to ``path`` for the names ``query`` probes (the
    query is limited to it, or an import of a probed name resolves there)."""
    if query.limits_to(path):
        return True
    return any(imported.get(n) == path for n in query.identifier.split(","))


def score_candidates(
    candidates: list[Candidate],
    *,
    window: str,
    plan: QueryPlan,
    imported: dict[str, str],
    method: str,
    weights: ScoreWeights,
    package: PackageScope | None = None,
    prefix: str = "",
    lines_of: Callable[[str], Sequence[str] | None] = lambda path: None,
) -> list[Candidate]:
    """New candidates with their final score, best first (ties keep the route's order);
    ``package``: the cursor file's Java package; ``prefix``: the cursor line up to the
    cursor; ``lines_of``: the lines a candidate was cut from, where known (its tokens are
    then read off its file's: ``bm25.candidate_scores``)."""
    if method == "jaccard":
        return rerank(candidates, window, "jaccard")
    bm25 = candidate_scores(candidates, window, method, lines_of)
    matched = [raw for c, raw in zip(candidates, bm25, strict=True) if c.match_lines]
    top = max(matched, default=0.0) or max(bm25, default=0.0) or 1.0
    code = " ".join(prefix.split())  # the cursor line's, for _same_shape
    written = set(IDENTIFIER_RE.findall(window)) if code else set()
    scored = []
    for cand, raw in zip(candidates, bm25, strict=True):
        query = plan.queries[cand.query_index] if cand.query_index >= 0 else None
        purpose = query.purpose if query else ""
        score = weights.bm25 * min(raw / top, 1.0) + weights.prior * cand.prior
        if purpose == "second hop" or (
            purpose != "usage" and query and points_to(cand.path, query, imported)
        ):  # the definition sits where the import, or the receiver's declared type, points
            score += weights.import_bonus
        elif (
            package
            and purpose != "usage"
            and query
            and package.defines(cand.path, query.identifier.split(","))
        ):  # a class of the file's own package, which needs no import
            score += weights.import_bonus * PACKAGE_SHARE
        if purpose == "definition":
            score += weights.definition_bonus
        elif purpose == "usage" and query and _same_shape(cand, query.identifier, code, written):
            score += weights.shape_bonus
        scored.append(cand.rescored(score))
    return sorted(scored, key=lambda c: -c.score)


def _same_shape(cand: Candidate, identifiers: str, code: str, written: set[str]) -> bool:
    """A usage line of ``cand`` has ``code`` (the cursor line's, whitespace runs as one
    space) just before a probed name that the window has not written yet (``async with
    create_task_group(``, ``raise HTTPError(``): the statement being written, as written
    elsewhere."""
    if not code:
        return False
    names = [n for n in identifiers.split(",") if n and n not in written]
    if not names:
        return False
    lines = cand.text.split("\n")
    for number in cand.match_lines:
        k = number - cand.start_line
        if 0 <= k < len(lines) and any(_opens_with(lines[k], code, n) for n in names):
            return True
    return False


def _opens_with(line: str, code: str, name: str) -> bool:
    """``name`` stands in ``line`` as a whole word right after ``code`` (itself not the
    tail of a longer word or dotted name)."""
    at = line.find(name)
    while at >= 0:
        end = at + len(name)
        if end == len(line) or not _is_word(line[end]):
            before = " ".join(line[:at].split())
            if before.endswith(code):
                cut = len(before) - len(code)
                if cut == 0 or not (_is_word(code[0]) and _is_word(before[cut - 1], ".")):
                    return True
        at = line.find(name, at + 1)
    return False


def _is_word(char: str, also: str = "") -> bool:
    return char.isalnum() or char == "_" or char in also
