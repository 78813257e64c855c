"""The dense route: embed the local context, search the repo's chunk index, never stale.

Each search first brings the index up to date (changed files re-chunked and re-embedded
within ``stale_bound_s``); files that do not fit come back as skips and none
of their chunks is returned. Candidate text is read from the file as it is now.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

from greprag.config import Settings
from greprag.context import LocalContext
from greprag.files import FileCache
from greprag.models import Candidate, Skip
from greprag.routes import RouteHits, RouteRequest

QUERY_PROSE_CHARS = 600
STALE_REASON = "changed since the dense index (over the stale bound): dense left it out"


def dense_available() -> bool:
    """True when the dense extra (sentence-transformers, faiss) is installed; imports nothing."""
    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "faiss"))


def has_index(repo: Path, settings: Settings) -> bool:
    """An index exists for this repo, model and backend (an old one would be all stale).
    Loads no model."""
    from greprag.dense.naming import choose_backend, index_dir, model_label, snapshot_path

    name = model_label(settings.dense_model or None, choose_backend(settings.dense_backend or None))
    return snapshot_path(index_dir(repo, settings.dense_cache()), name).is_file()


def dense_query_text(ctx: LocalContext) -> str:
    """What to embed for a cursor: the last non-blank line before it (for prose without a
    language, the end of the question instead).

    Chosen by measurement on the benchmark's implicit subset (rank of the gold chunk):
    the cursor line alone (``for mark in item.``) beats the last 2, 3, 5, 10 or 20 lines,
    text grown to 30-100 characters, and the class header plus function signature in
    front: more text dilutes what the cursor is about (docs/benchmarks.md, "Dense route").
    """
    lines = [line.strip() for line in ctx.window.splitlines() if line.strip()]
    if ctx.lang is None:
        return " ".join(lines)[-QUERY_PROSE_CHARS:]
    return lines[-1] if lines else ""


class DenseRoute:
    """Dense retrieval over one repo; keeps the model and index in memory between calls."""

    name = "dense"

    def __init__(
        self,
        repo: Path,
        *,
        model: str | None = None,
        cache_dir: Path | None = None,
        stale_bound_s: float = 1.0,
        local_files_only: bool | None = None,
        device: str | None = None,
        backend: str | None = None,
        rg_path: str | None = None,
    ) -> None:
        from greprag.dense.embed import Embedder
        from greprag.dense.index import DenseIndex

        self.repo = Path(repo).resolve()
        self.stale_bound_s = stale_bound_s
        self.embedder = Embedder(
            model, local_files_only=local_files_only, device=device, backend=backend
        )
        self.index = DenseIndex(
            self.repo, embedder=self.embedder, cache_dir=cache_dir, rg_path=rg_path
        )

    @classmethod
    def from_settings(cls, repo: Path, settings: Settings) -> DenseRoute:
        return cls(
            repo,
            model=settings.dense_model or None,
            cache_dir=settings.dense_cache(),
            stale_bound_s=settings.stale_bound_s,
            backend=settings.dense_backend or None,
            rg_path=settings.rg_path or None,
        )

    def search(self, request: RouteRequest) -> RouteHits:
        """The ``request.k`` chunks most similar to ``request.text`` (default: the cursor's
        ``dense_query_text``), from fresh files only; changed files past ``stale_bound_s``
        are left out and said so in the notes. ``DenseError`` when the repo has no usable
        index (none, damaged, outdated) or the extra cannot load."""
        self.index.require()  # before the model loads: no index, no search
        query_text = request.text or dense_query_text(request.ctx)
        exclude_path = request.current.path  # chunks are not cut: the file is left out
        timings: dict[str, float] = {}
        notes: list[str] = []
        loaded = self.embedder.loaded
        started = time.perf_counter()
        vector = self.embedder.encode([query_text])[0]
        timings["dense_embed"] = (time.perf_counter() - started) * 1000
        if not loaded and self.embedder.load_s is not None:
            notes.append(f"model load {self.embedder.load_s:.1f} s")
        started = time.perf_counter()
        report = self.index.update(bound_s=self.stale_bound_s)
        timings["dense_refresh"] = (time.perf_counter() - started) * 1000
        if report.changed or report.deleted:
            notes.append(f"updated {report.changed} file(s), removed {report.deleted}")
        if report.note:
            notes.append(report.note)
        if report.stale:
            notes.append(
                f"{len(report.stale)} changed file(s) left out (over "
                f"{self.stale_bound_s:g} s bound); run `greprag index`"
            )
        exclude = set(report.stale) | ({exclude_path} if exclude_path else set())
        started = time.perf_counter()
        hits = self.index.search(vector, request.k, exclude)
        candidates = [
            c for c in (self._candidate(row, score, request.files) for row, score in hits) if c
        ]
        timings["dense_search"] = (time.perf_counter() - started) * 1000
        stale = [Skip(p, STALE_REASON) for p in sorted(report.stale)]
        return RouteHits(self.name, candidates, skipped=stale, notes=notes, timings=timings)

    def _candidate(self, row, score: float, files: FileCache) -> Candidate | None:
        """``row`` (a ``greprag.dense.store.Row``: data from disk) as a candidate, its text
        read now through the containment-checked cache; None if the file is gone or outside."""
        lines = files.get(row.path)
        if not lines or row.start_line < 1:
            return None
        text = "\n".join(lines[row.start_line - 1 : row.end_line])
        return Candidate(
            path=row.path,
            start_line=row.start_line,
            end_line=row.end_line,
            text=text,
            route="dense",
            score=score,
        )
