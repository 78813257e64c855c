"""The systems compared side by side; each packs its context into the same token budget."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.baselines import SparseIndex, context_of, last_lines, pack, repo_chunks
from bench.tasks import Task, tracked_files

BUDGET = 4096


@dataclass
class Retrieval:
    """What a system put in the prompt for one task."""

    blocks: list[Any]  # objects with .path, .start_line, .end_line (greprag Block)
    context: str
    latency_ms: float  # GrepRAG: Result.timings["total"]; baselines: wall clock


class System(Protocol):
    name: str

    def setup(self, root: Path, lang: str) -> float:
        """Prepare for a repository (index, retriever); returns the seconds it took."""
        ...

    def retrieve(self, root: Path, task: Task, left: str) -> Retrieval: ...


@dataclass
class GrepRAGSystem:
    """The GrepRAG ``Retriever`` with fixed settings (one instance per repository)."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    _retrievers: dict[Path, Any] = field(default_factory=dict, repr=False)

    def setup(self, root: Path, lang: str) -> float:
        from greprag import Retriever

        started = time.perf_counter()
        self._retrievers[root] = Retriever(str(root), budget=BUDGET, **self.options)
        return time.perf_counter() - started

    def retrieve(self, root: Path, task: Task, left: str) -> Retrieval:
        result = self._retrievers[root].retrieve(file=task.path, line=task.line, column=task.column)
        return Retrieval(list(result.blocks), result.context, result.timings["total"])


@dataclass
class SparseSystem:
    """A fixed-window sparse retriever (CrossCodeEval BM25 or RepoCoder Jaccard)."""

    name: str
    method: str
    window: int
    stride: int
    query_lines: int
    _indexes: dict[Path, SparseIndex] = field(default_factory=dict, repr=False)

    def setup(self, root: Path, lang: str) -> float:
        started = time.perf_counter()
        chunks = repo_chunks(root, tracked_files(root), lang, self.window, self.stride)
        self._indexes[root] = SparseIndex(chunks, self.method)
        return time.perf_counter() - started

    def retrieve(self, root: Path, task: Task, left: str) -> Retrieval:
        started = time.perf_counter()
        ranked = self._indexes[root].rank(last_lines(left, self.query_lines), task.path)
        blocks = pack(ranked, BUDGET)
        context = context_of(blocks)
        return Retrieval(blocks, context, (time.perf_counter() - started) * 1000)


@dataclass
class NoRetrieval:
    name: str = "no-retrieval"

    def setup(self, root: Path, lang: str) -> float:
        return 0.0

    def retrieve(self, root: Path, task: Task, left: str) -> Retrieval:
        return Retrieval([], "", 0.0)


def dense_available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("faiss", "sentence_transformers"))


SYSTEMS: dict[str, Callable[[], System]] = {
    "greprag": lambda: GrepRAGSystem("greprag", {"routes": "grep"}),
    "naive-greprag": lambda: GrepRAGSystem(
        "naive-greprag", {"rerank": "jaccard", "dedup": False, "routes": "grep"}
    ),
    "greprag-no-bm25": lambda: GrepRAGSystem(
        "greprag-no-bm25", {"rerank": "none", "routes": "grep"}
    ),
    "greprag-no-dedup": lambda: GrepRAGSystem(
        "greprag-no-dedup", {"dedup": False, "routes": "grep"}
    ),
    "greprag-no-similar": lambda: GrepRAGSystem(
        "greprag-no-similar", {"routes": "grep", "similar": False}
    ),
    "greprag-no-compact": lambda: GrepRAGSystem(
        "greprag-no-compact",
        {"routes": "grep", "compact_after_share": 1.0, "similar_share": 1.0},
    ),
    "grep+dense": lambda: GrepRAGSystem("grep+dense", {"routes": "auto"}),
    "cceval-bm25": lambda: SparseSystem("cceval-bm25", "bm25", 10, 10, 10),
    "repocoder-jaccard": lambda: SparseSystem("repocoder-jaccard", "jaccard", 20, 10, 20),
    "no-retrieval": NoRetrieval,
}
# Ablations of issue 8's parts run on request (``--systems``), not by default.
ABLATIONS = ("greprag-no-similar", "greprag-no-compact")
DEFAULT_SYSTEMS: tuple[str, ...] = tuple(
    name for name in SYSTEMS if name != "grep+dense" and name not in ABLATIONS
)


def make_systems(names: list[str]) -> list[System]:
    """Instantiate systems by name; ``grep+dense`` needs the dense extra."""
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown systems {unknown}; choose from {sorted(SYSTEMS)}")
    if "grep+dense" in names and not dense_available():
        raise RuntimeError("grep+dense needs the dense extra (pip install 'greprag[dense]')")
    return [SYSTEMS[n]() for n in names]
