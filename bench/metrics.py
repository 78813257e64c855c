"""Retrieval and completion metrics, per task and aggregated per system.

A gold location is *retrieved* when some packed block of the same file spans the
definition's header line (the line naming it: ``def f``, ``class C``, ``x = ...``);
a target with several alternatives (overloads) counts when any one is retrieved.

*Identifier recall* is the share of the identifiers of the ground-truth completion that the
left context does not contain (keywords excluded) and the packed context does; *precision*
the share of packed blocks that contain any of those identifiers.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from bench.facts import IDENT_RE, Location, Target
from greprag.languages import get_language


def covers(blocks: Iterable[Any], location: Location) -> bool:
    """True when a block of ``location.path`` spans its header line."""
    return any(
        b.path == location.path and b.start_line <= location.line <= b.end_line for b in blocks
    )


def target_hit(blocks: Iterable[Any], target: Target) -> bool:
    blocks = list(blocks)
    return any(covers(blocks, location) for location in target)


def missing_identifiers(ground_truth: str, left: str, lang: str | None = None) -> set[str]:
    """Identifiers of the ground-truth line that the left context never mentions."""
    language = get_language(lang)
    keywords = language.keywords if language else frozenset()
    return set(IDENT_RE.findall(ground_truth)) - set(IDENT_RE.findall(left)) - keywords


def block_precision(blocks: Iterable[Any], missing: set[str]) -> float | None:
    """Share of ``blocks`` (objects with ``.text``) containing any ``missing`` identifier;
    None without blocks or without missing identifiers."""
    blocks = list(blocks)
    if not blocks or not missing:
        return None
    useful = sum(bool(missing & set(IDENT_RE.findall(b.text))) for b in blocks)
    return useful / len(blocks)


def identifier_recall(missing: set[str], context: str) -> float | None:
    """Share of ``missing`` identifiers present in ``context``; None when nothing is missing."""
    if not missing:
        return None
    present = set(IDENT_RE.findall(context))
    return len(missing & present) / len(missing)


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100]; nan for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def exact_match(prediction: str, truth: str) -> bool:
    return prediction.strip() == truth.strip()


def edit_similarity(prediction: str, truth: str) -> float:
    """1 - Levenshtein distance / longer length, on stripped strings (1.0 for two empties)."""
    a, b = prediction.strip(), truth.strip()
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1 - levenshtein(a, b) / longest


def identifier_f1(prediction: str, truth: str) -> float:
    """F1 of the identifier multisets of prediction and truth."""
    predicted, expected = Counter(IDENT_RE.findall(prediction)), Counter(IDENT_RE.findall(truth))
    if not predicted and not expected:
        return 1.0
    overlap = sum((predicted & expected).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / sum(predicted.values()), overlap / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


@dataclass
class TaskResult:
    task_id: str
    system: str
    lang: str
    repo: str
    kind: str
    gold_hit: bool | None  # None: the task has no gold definition (body tasks)
    member_hit: bool | None
    ident_recall: float | None
    tokens: int
    latency_ms: float
    precision: float | None = None
    blocks: int = 0
    exact_match: bool | None = None
    edit_similarity: float | None = None
    identifier_f1: float | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _by_kind(items: list[TaskResult], key: str) -> dict[str, float | None]:
    values: dict[str, list[float]] = defaultdict(list)
    for r in items:
        value = getattr(r, key)
        if value is not None:
            values[r.kind].append(float(value))
    return {kind: _mean(v) for kind, v in sorted(values.items())}


def summarize(
    results: Iterable[TaskResult],
    setup_s: dict[tuple[str, str], float],
) -> list[dict[str, Any]]:
    """One row per (language, system): recalls, precision, tokens, latency percentiles,
    set-up time, and per task kind gold recall, identifier recall and precision."""
    groups: dict[tuple[str, str], list[TaskResult]] = defaultdict(list)
    for result in results:
        groups[(result.lang, result.system)].append(result)
    rows = []
    for (lang, system), items in groups.items():
        latencies = [r.latency_ms for r in items if r.error is None]
        row: dict[str, Any] = {
            "lang": lang,
            "system": system,
            "tasks": len(items),
            "errors": sum(r.error is not None for r in items),
            "gold_recall": _mean([float(r.gold_hit) for r in items if r.gold_hit is not None]),
            "member_recall": _mean(
                [float(r.member_hit) for r in items if r.member_hit is not None]
            ),
            "member_tasks": sum(r.member_hit is not None for r in items),
            "ident_recall": _mean([r.ident_recall for r in items if r.ident_recall is not None]),
            "precision": _mean([r.precision for r in items if r.precision is not None]),
            "mean_blocks": _mean([float(r.blocks) for r in items]),
            "mean_tokens": _mean([float(r.tokens) for r in items]),
            "p50_ms": percentile(latencies, 50),
            "p95_ms": percentile(latencies, 95),
            "setup_s": setup_s.get((lang, system), 0.0),
            "gold_recall_by_kind": _by_kind(items, "gold_hit"),
            "ident_recall_by_kind": _by_kind(items, "ident_recall"),
            "precision_by_kind": _by_kind(items, "precision"),
            "tokens_by_kind": _by_kind(items, "tokens"),
        }
        for key in ("exact_match", "edit_similarity", "identifier_f1"):
            row[key] = _mean([float(getattr(r, key)) for r in items if getattr(r, key) is not None])
        rows.append(row)
    return rows
