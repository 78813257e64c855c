"""``python -m bench docs``: docs mode on real manuals, against a BM25-over-windows baseline.

For each corpus (``bench.docs_corpora``) and question (``bench.docs_tasks``), each system
answers within the same budget (4096 tokens, at most 10 blocks); a question is recalled
when a block spans its gold line, and its reciprocal rank is 1 / the rank of the first
such block (0 when none). Systems: docs mode's grep route alone, its dense route alone,
both fused (the default), and BM25 (rank_bm25) over 20-line windows of the same files.
``--ablations`` runs the grep route and the fused search again with one part of question
understanding turned off at a time. Prints Markdown tables; writes them and every answer
(JSON) into the output folder.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.baselines import chunk_lines
from bench.corpora import cache_dir
from bench.docs_corpora import DocsCorpus, docs_corpora_for, fetch_docs
from bench.docs_tasks import QUESTION_KINDS, Question, answered_by, questions_for
from bench.metrics import percentile

__all__ = [
    "ABLATIONS",
    "SYSTEMS",
    "DocsModeSystem",
    "WindowsBM25",
    "main",
    "markdown",
    "run",
    "summarize",
]

BUDGET = 4096
K = 10
WINDOW, STRIDE = 20, 10
_TAG = re.compile(r"<[^>]*>")
_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def _log(message: str) -> None:
    print(f"[docs-bench] {message}", file=sys.stderr, flush=True)


@dataclass
class Answer:
    blocks: list[Any]  # objects with .path, .start_line, .end_line
    latency_ms: float


class DocsModeSystem:
    """``docs_mode.search.DocsSearch`` with fixed routes and profile (one per corpus)."""

    def __init__(
        self,
        name: str,
        routes: str,
        profile_changes: dict[str, Any] | None = None,
        stop_words: bool = True,
    ) -> None:
        self.name = name
        self.routes = routes
        self.profile_changes = profile_changes or {}
        self.stop_words = stop_words
        self._search: dict[Path, Any] = {}

    @property
    def dense(self) -> bool:
        return self.routes != "grep"

    def setup(self, root: Path) -> None:
        from docs_mode.profile import load_profile
        from docs_mode.router import OfflineQuestionRouter
        from docs_mode.search import DocsSearch
        from greprag.config import load_settings

        profile = replace(load_profile(), **self.profile_changes)
        router = OfflineQuestionRouter(profile, stop_words=None if self.stop_words else frozenset())
        settings = load_settings(
            root, budget=BUDGET, routes=self.routes, dense_cache_dir=str(_dense_cache())
        )
        search = DocsSearch(root, settings, profile=profile, router=router)
        search.warm()  # a long-lived process: files are parsed once, questions time rg + ranking
        self._search[root] = search

    def answer(self, root: Path, question: str) -> Answer:
        started = time.perf_counter()
        result = self._search[root].search(question, k=K)
        return Answer(list(result.blocks), (time.perf_counter() - started) * 1000)


@dataclass
class WindowsBM25:
    """BM25 Okapi (rank_bm25) over 20-line windows (stride 10) of every file docs mode
    reads, HTML pages by their text; the question's words as the query; best windows
    packed into the same budget and ``k``."""

    name: str = "bm25-windows"
    _index: dict[Path, tuple[Any, list[Any]]] = field(default_factory=dict)

    dense = False

    def setup(self, root: Path) -> None:
        from rank_bm25 import BM25Okapi

        from docs_mode.profile import load_profile
        from greprag.languages import language_for_path
        from greprag.rg import find_rg, list_files

        docs = load_profile().extensions()
        chunks = []
        for rel in list_files(find_rg(None), root):
            suffix = Path(rel).suffix.lower()
            if suffix not in docs and language_for_path(rel) is None:
                continue
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            if suffix in (".html", ".htm"):
                text = "\n".join(_TAG.sub(" ", line) for line in text.split("\n"))
            chunks += chunk_lines(rel, text, WINDOW, STRIDE)
        tokens = [[t.lower() for t in _TOKEN.findall(c.text)] or [""] for c in chunks]
        self._index[root] = (BM25Okapi(tokens), chunks)

    def answer(self, root: Path, question: str) -> Answer:
        from greprag.models import Block
        from greprag.render import block_text
        from greprag.tokens import count_tokens

        started = time.perf_counter()
        bm25, chunks = self._index[root]
        scores = bm25.get_scores([t.lower() for t in _TOKEN.findall(question)])
        order = sorted(range(len(chunks)), key=lambda i: -scores[i])
        blocks, used = [], 0
        for i in order:
            if len(blocks) == K or scores[i] <= 0:
                break
            c = chunks[i]
            block = Block(c.path, c.start_line, c.end_line, c.text, float(scores[i]), "bm25")
            size = count_tokens(block_text(block))
            if used + size <= BUDGET:
                blocks.append(block)
                used += size + 1
        return Answer(blocks, (time.perf_counter() - started) * 1000)


def _dense_cache() -> Path:
    return cache_dir() / "docs-dense"


SYSTEMS: dict[str, Callable[[], Any]] = {
    "grep": lambda: DocsModeSystem("grep", "grep"),
    "dense": lambda: DocsModeSystem("dense", "dense"),
    "fused": lambda: DocsModeSystem("fused", "auto"),
    "bm25-windows": WindowsBM25,
}
# One part of question understanding off at a time (grep route and fused search).
ABLATIONS: dict[str, dict[str, Any]] = {
    "no synonyms": {"synonyms": ""},
    "no stemming": {"stemming": False},
    "no identifier splitting": {"split_identifiers": False},
    "no joined words": {"joined_weight": 0.0},
    "named definitions not lifted": {"name_factor": 1.0, "question_name_factor": 1.0},
    "common words at full weight": {"generic_weight": 1.0},
    "identifiers at keyword weight": {"identifier_weight": 1.0},
}


def _systems(names: list[str], ablations: bool) -> list[Any]:
    systems = [SYSTEMS[name]() for name in names]
    if ablations:
        for label, changes in ABLATIONS.items():
            systems.append(DocsModeSystem(f"grep, {label}", "grep", changes))
            systems.append(DocsModeSystem(f"fused, {label}", "auto", changes))
        systems.append(DocsModeSystem("grep, stop words kept", "grep", stop_words=False))
        systems.append(DocsModeSystem("fused, stop words kept", "auto", stop_words=False))
    return systems


def _build_dense(root: Path) -> float:
    from greprag.dense.index import DenseIndex

    started = time.perf_counter()
    index = DenseIndex(root, cache_dir=_dense_cache())
    report = index.update(progress=lambda done, total: _log(f"  embedded {done}/{total} files"))
    seconds = time.perf_counter() - started
    _log(f"  dense index: {report.embedded} chunks embedded in {seconds:.0f} s")
    return seconds


@dataclass
class Record:
    corpus: str
    kind: str
    question: str
    system: str
    rank: int | None
    latency_ms: float


def summarize(records: list[Record]) -> list[dict[str, Any]]:
    """One row per (kind, system): questions, recall within the budget, MRR, latency."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        groups[(r.kind, r.system)].append(r)
        groups[("all", r.system)].append(r)
    rows = []
    for (kind, system), items in groups.items():
        latencies = [r.latency_ms for r in items]
        rows.append(
            {
                "kind": kind,
                "system": system,
                "questions": len(items),
                "recall": sum(r.rank is not None for r in items) / len(items),
                "recall_3": sum(r.rank is not None and r.rank <= 3 for r in items) / len(items),
                "mrr": sum(1 / r.rank for r in items if r.rank) / len(items),
                "p50_ms": statistics.median(latencies),
                "p95_ms": percentile(latencies, 95),
            }
        )
    return rows


def latency_rows(records: list[Record]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        groups[(r.corpus, r.system)].append(r.latency_ms)
    return [
        {
            "corpus": corpus,
            "system": system,
            "questions": len(ms),
            "p50_ms": statistics.median(ms),
            "p95_ms": percentile(ms, 95),
        }
        for (corpus, system), ms in groups.items()
    ]


def markdown(rows: list[dict[str, Any]], latency: list[dict[str, Any]]) -> str:
    """Recall and MRR per question kind and system, then latency per corpus and system."""
    kinds = [k for k in (*QUESTION_KINDS, "all") if any(r["kind"] == k for r in rows)]
    systems = list(dict.fromkeys(r["system"] for r in rows))
    by = {(r["kind"], r["system"]): r for r in rows}
    out = [
        "| question kind | system | questions | recall (budget) | recall@3 | MRR |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind in kinds:
        for system in systems:
            row = by.get((kind, system))
            if row:
                out.append(
                    f"| {kind} | {system} | {row['questions']} | {row['recall']:.3f} | "
                    f"{row['recall_3']:.3f} | {row['mrr']:.3f} |"
                )
    out += [
        "",
        "| corpus | system | questions | p50 ms | p95 ms |",
        "| --- | --- | --- | --- | --- |",
    ]
    out += [
        f"| {r['corpus']} | {r['system']} | {r['questions']} | {r['p50_ms']:.1f} | "
        f"{r['p95_ms']:.1f} |"
        for r in latency
    ]
    return "\n".join(out)


def run(
    corpora: list[DocsCorpus],
    *,
    limit: int,
    seed: int,
    systems: list[str],
    ablations: bool,
    out: Path | None,
) -> dict[str, Any]:
    """Fetch, ask, score; write results.md and results.json; return the payload."""
    started = time.perf_counter()
    chosen = _systems(systems, ablations)
    records: list[Record] = []
    asked: list[Question] = []
    setup_s: dict[str, float] = {}
    for corpus in corpora:
        root = fetch_docs(corpus)
        questions = questions_for(root, corpus.name, corpus.code, limit, seed)
        asked += questions
        _log(f"{corpus.name}: {len(questions)} questions")
        if any(getattr(s, "dense", False) for s in chosen):
            setup_s[f"{corpus.name} dense index"] = _build_dense(root)
        for system in chosen:
            tick = time.perf_counter()
            system.setup(root)
            for q in questions[:2]:  # warm-up: the first question pays the imports
                system.answer(root, q.text)
            for q in questions:
                got = system.answer(root, q.text)
                records.append(
                    Record(
                        corpus.name,
                        q.kind,
                        q.id,
                        system.name,
                        answered_by(got.blocks, q),
                        got.latency_ms,
                    )
                )
            _log(f"  {system.name}: {time.perf_counter() - tick:.1f} s")
    rows, latency = summarize(records), latency_rows(records)
    table = markdown(rows, latency)
    folder = out or cache_dir() / "docs-runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "config": {
            "corpora": [c.key for c in corpora],
            "limit": limit,
            "seed": seed,
            "systems": [s.name for s in chosen],
            "budget": BUDGET,
            "k": K,
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
        "setup_s": setup_s,
        "summary": rows,
        "latency": latency,
        "questions": [q.to_dict() for q in asked],
        "records": [r.__dict__ for r in records],
    }
    (folder / "results.md").write_text(table + "\n")
    (folder / "results.json").write_text(json.dumps(payload, indent=1))
    _log(f"wrote {folder}/results.md and results.json in {payload['elapsed_s']} s")
    return payload


def main(args) -> int:
    corpora = docs_corpora_for(args.corpus)
    if not corpora:
        print("no docs corpus matches", file=sys.stderr)
        return 2
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        print(f"unknown systems {unknown}; choose from {sorted(SYSTEMS)}", file=sys.stderr)
        return 2
    payload = run(
        corpora,
        limit=args.limit,
        seed=args.seed,
        systems=names,
        ablations=args.ablations,
        out=args.out,
    )
    print(markdown(payload["summary"], payload["latency"]))
    return 0
