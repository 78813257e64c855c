"""Bulk dense indexing: many repositories' indexes built with one loaded model.

``index_repos`` is what one Ray task runs for a shard (``on_ray.bulk_index``), and what a
single process runs for a whole workspace; each repo's index is the one ``greprag index``
builds (incremental: only changed files are embedded).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["IndexReport", "index_repos"]


@dataclass(frozen=True)
class IndexReport:
    """What indexing one repository did."""

    repo: Path
    files: int
    embedded: int
    chunks: int
    seconds: float


def index_repos(paths: list[Path], settings: dict[str, Any]) -> list[IndexReport]:
    """Bring each repo's dense index up to date, in order, sharing one embedding model."""
    from greprag.config import load_settings
    from greprag.dense.embed import Embedder
    from greprag.dense.index import DenseIndex

    embedder = None
    reports = []
    for path in paths:
        started = time.perf_counter()
        s = load_settings(path, **settings)
        embedder = embedder or Embedder(s.dense_model or None, backend=s.dense_backend or None)
        index = DenseIndex(
            path, embedder=embedder, cache_dir=s.dense_cache(), rg_path=s.rg_path or None
        )
        report = index.update()
        chunks = len(index.snapshot.rows) if index.snapshot else 0
        seconds = time.perf_counter() - started
        reports.append(IndexReport(path, report.changed, report.embedded, chunks, seconds))
    return reports
