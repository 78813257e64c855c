"""Plain-language search over a repository's documentation and code (``Retriever.search``).

question → ``OfflineQuestionRouter`` (terms → validated plan) → ``SectionGrepRoute`` (one
rg pass, hits gathered per section or definition, BM25 over whole units) and, where the
repository has a dense index, the dense route (its chunks mapped to the same units, and
the question's cosine with grep's best units read from the index) → ``fuse_units`` (BM25
and cosine mixed per unit, every route's whole list) → ``identifiers_first`` →
``pack_passages`` (at most ``k`` blocks within the budget) → ``Result``.

``DocsSearch`` keeps what is worth keeping between questions: parsed units per file
version (and, on disk, their layout for the next process: ``docs_mode.unit_store``),
the file list, the dense model.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from docs_mode.grep import SectionGrepRoute
from docs_mode.profile import DocsProfile, load_profile
from docs_mode.router import OfflineQuestionRouter, QuestionRouter
from docs_mode.sections import Section
from docs_mode.unit_store import UnitStore
from docs_mode.units import KINDS, SearchKind, UnitCache
from docs_mode.vectors import UnitVectors
from greprag.config import Settings, cache_root
from greprag.context import build_local_context
from greprag.errors import RetrievalError
from greprag.files import FileCache
from greprag.fusion.assemble import MIN_BLOCK_CAP
from greprag.fusion.passages import fuse_units, identifiers_first, pack_passages
from greprag.models import Candidate, QueryPlan, Result
from greprag.routes import RouteHits, RouteRequest
from greprag.routes.choose import DenseJoin
from greprag.timing import Clock

__all__ = ["DocsSearch"]

MAX_QUESTION_CHARS = 2000


class DocsSearch:
    """Search one repository's docs and code; see the module docstring."""

    def __init__(
        self,
        repo: Path,
        settings: Settings,
        *,
        profile: DocsProfile | None = None,
        router: QuestionRouter | None = None,
        dense: DenseJoin | None = None,
    ) -> None:
        self.repo = repo
        self.settings = settings
        self.profile = profile or load_profile()
        store = UnitStore(cache_root(settings.cache_dir), repo, self.profile)
        self.units = UnitCache(repo, self.profile, store)
        self.grep = SectionGrepRoute.from_settings(repo, settings, self.units, self.profile)
        self.router = router or _router(self.profile, settings)
        self.dense = dense or DenseJoin(repo, settings)
        self.vectors = UnitVectors()

    def warm(self, kind: SearchKind = "all") -> int:
        """Read every searchable file's units now (a server at start, a benchmark before
        timing), so later questions pay only for rg and ranking; how many files. Units
        read from their recorded layout are built here too (else on first use)."""
        self.units.begin()
        files, _ = self.grep._files()
        searched = [path for path in files if self.units.searchable(path, kind)]
        for path in searched:
            for _ in self.units.units(path, kind).units:
                pass
        return len(searched)

    def plan(self, question: str) -> QueryPlan:
        """The validated plan for ``question``: the terms rg will search, with weights."""
        return self.router.plan(_checked(question))

    def search(
        self,
        question: str,
        *,
        budget: int | None = None,
        k: int | None = None,
        kind: SearchKind = "all",
    ) -> Result:
        """The sections and definitions that answer ``question``, packed (see the module)."""
        with _no_cycle_collection():
            return self._search(question, budget, k, kind)

    def _search(self, question: str, budget: int | None, k: int | None, kind: SearchKind) -> Result:
        s, p = self.settings, self.profile
        budget = s.budget if budget is None else budget
        k = p.k if k is None else k
        if kind not in KINDS:
            raise RetrievalError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if budget < 1 or k < 1:
            raise RetrievalError("budget and k must be positive")
        clock = Clock()
        self.units.begin()
        plan = self.plan(question)
        clock.lap("router")
        request = RouteRequest(
            plan,
            build_local_context(question),
            FileCache(self.repo),
            text=question,
            k=p.dense_k,
        )
        routes: dict[str, str] = {"grep": "not run: dense requested"}
        grep = RouteHits("grep", [])
        if s.routes != "dense":
            grep = self.grep.search(request, kind)
            routes["grep"] = "always on" if s.routes == "auto" else "grep requested"
        clock.lap("grep")
        dense, routes["dense"], dense_notes = self._dense(request, kind)
        cosines: dict[tuple[str, int], float] = {}
        if dense is not None and grep.candidates:
            best = [(c.path, c.start_line) for c in grep.candidates[: p.dense_rescore]]
            stale = {skip.path for skip in dense.skipped}
            with self.dense.using() as route:
                cosines = self.vectors.cosines(route, question, best, stale)
        clock.lap("dense")
        fused = fuse_units(
            grep.candidates,
            dense.candidates if dense is not None else [],
            cosines,
            dense_weight=p.dense_weight,
        )
        ranked = identifiers_first(fused, plan)
        clock.lap("fuse")
        packed = pack_passages(
            self._passages(ranked, kind),
            budget=budget,
            k=k,
            max_block_tokens=max(MIN_BLOCK_CAP, int(budget * p.max_block_share)),
            lines_of=request.files.get,
            encoding=s.encoding,
        )
        clock.lap("pack")
        notes = [*s.notes, *plan.fallbacks, *grep.notes, *dense_notes]
        skipped = list(grep.skipped)
        if dense is not None:
            notes += [f"dense: {note}" for note in dense.notes]
            skipped += dense.skipped
        return Result(
            blocks=packed.blocks,
            context=packed.context,
            tokens=packed.tokens,
            queries=list(plan.queries),
            timings=clock.total(),
            router=plan.router,
            fallbacks=notes,
            skipped=skipped,
            dropped=packed.dropped,
            routes=routes,
        )

    def _dense(
        self, request: RouteRequest, kind: SearchKind
    ) -> tuple[RouteHits | None, str, list[str]]:
        """The dense route's chunks as units of ``kind`` (best rank each), why it ran or
        did not, and what the user should hear about that."""
        from greprag.routes.dense import dense_available, has_index

        mode = self.settings.routes
        if mode == "grep":
            return None, "not run: grep requested", []
        if not dense_available():
            return None, "not run: dense extra not installed", []
        reason = "question: dense joins when indexed"
        if mode == "auto":
            skip, tell = self.dense.auto_skip(reason)
            if skip:
                return None, f"not run: {skip}", [f"dense: {skip}"] * tell
        elif not has_index(self.repo, self.settings):
            return None, f"not run: the repo has no index (greprag index --repo {self.repo})", []
        with self.dense.using() as route:
            hits = route.search(request)
        units: list[Candidate] = []
        seen: set[tuple[str, int]] = set()
        for cand in hits.candidates:
            unit = self.units.units(cand.path, kind).at(cand.start_line)
            if unit is None or (cand.path, unit.start_line) in seen:
                continue
            seen.add((cand.path, unit.start_line))
            units.append(
                Candidate(
                    cand.path, unit.start_line, unit.end_line, unit.text, "dense", score=cand.score
                )
            )
        hits.candidates = units
        return hits, "dense requested" if mode == "dense" else reason, []

    def _passages(
        self, ranked: list[Candidate], kind: SearchKind
    ) -> Iterator[tuple[Candidate, Section]]:
        for cand in ranked:
            unit = self.units.units(cand.path, kind).at(cand.start_line)
            if unit is not None:
                yield cand, unit


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off for one search: a search allocates tens of thousands of
    short-lived tuples and sets (freed by reference counting), and each collection pass
    walks every parsed unit kept in memory; 15-40% of a search's CPU on Django's manual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _router(profile: DocsProfile, settings: Settings) -> QuestionRouter:
    """The ``router`` setting's question router: offline, or a model over the offline one."""
    offline = OfflineQuestionRouter(profile)
    if settings.router != "llm":
        return offline
    from docs_mode.llm_router import LLMQuestionRouter

    return LLMQuestionRouter(offline, settings)


def _checked(question: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise RetrievalError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise RetrievalError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
    return question
