"""The Retriever: wiring only. Cursor → local context → router → routes → score → dedup,
widen and pack → Result. Each stage lives in its own package; this module decides the order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from greprag.config import Settings, load_settings
from greprag.context import LocalContext, context_at, context_of_text, repo_relative
from greprag.cursor_file import cursor_file
from greprag.errors import RetrievalError, RouterError, SearchError
from greprag.explain import explain_retrieval
from greprag.files import FileCache, FileStore
from greprag.fusion.assemble import assemble
from greprag.fusion.bm25 import tokenize_ahead
from greprag.fusion.score import ScoreWeights, score_candidates
from greprag.imports import PackageScope, resolve_imports
from greprag.languages import get_language
from greprag.models import QueryPlan, Result
from greprag.rg import shared_threads
from greprag.router import OfflineRouter, Router
from greprag.routes import Route, RouteHits, RouteRequest
from greprag.routes.choose import DenseJoin
from greprag.routes.grep import GrepRoute
from greprag.routes.similar import SimilarRoute
from greprag.syntax import BlockWidener
from greprag.timing import Clock
from greprag.tokens import preload_encoding
from greprag.warm import CacheWarmer

if TYPE_CHECKING:
    from docs_mode.ask import Answer

__all__ = ["Retriever"]


class Retriever:
    """Retrieve cross-file context from ``repo`` (see ``retrieve``).

    ``routes`` is the ``routes`` setting (``"grep"``, ``"dense"``, ``"auto"``) or a list of
    route objects that replace the default grep route (e.g. a ``StaticRoute`` in tests).
    ``router`` is the ``router`` setting (``"offline"`` or ``"llm"``) or a router object
    (anything with ``plan(ctx, imported) -> QueryPlan``) used instead. ``load_dense``
    False keeps ``auto`` from loading the dense model (a one-shot CLI call: it notes how
    to get dense instead). Other keyword arguments are settings
    (``greprag.config.Settings``).
    """

    def __init__(
        self,
        repo: str | Path,
        *,
        routes: str | Sequence[Route] | None = None,
        router: str | Router | None = None,
        load_dense: bool = True,
        **settings: Any,
    ) -> None:
        root = Path(repo).expanduser()
        if not root.is_dir():
            raise RetrievalError(f"repository not found: {repo}")
        self.repo = root.resolve()
        injected = None if router is None or isinstance(router, str) else router
        given = None if routes is None or isinstance(routes, str) else list(routes)
        self.settings: Settings = load_settings(
            self.repo,
            router=None if injected else router,
            routes=None if given is not None else routes,
            **settings,
        )
        s = self.settings
        self.grep = GrepRoute.from_settings(self.repo, s) if given is None else None
        self.routes: list[Route] = [self.grep] if self.grep else given or []
        if self.grep and s.similar:  # index-free similar code joins grep by default
            route = SimilarRoute(self.grep, weight=s.similar_weight, worker=s.similar_process)
            self.routes.append(route)
        self.offline = OfflineRouter.from_settings(s)
        self.router = injected
        self.weights = ScoreWeights.from_settings(s)
        self.files = FileStore(self.repo)  # lines kept across retrievals while unchanged
        self._warmer = CacheWarmer(self.files.lines, s.encoding, self.files.half_full)
        self._retrievals = 0
        self._warming: set[str | None] = set()  # languages whose files are queued
        preload_encoding(s.encoding)  # overlaps the tokenizer load with rg
        # the dense route joins where grep is weak
        self.dense = DenseJoin(self.repo, s, load_model=load_dense)
        self._docs = None  # docs_mode.search.DocsSearch, made on the first search

    # -- inputs ----------------------------------------------------------------------
    def local_context(
        self,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        *,
        left_context: str | None = None,
        language: str | None = None,
    ) -> LocalContext:
        """The LocalContext for a file position or for a left-context string (with
        ``file`` too: the text is that file's buffer up to the cursor)."""
        window = self.settings.window_lines
        if left_context is not None:
            path = repo_relative(self.repo, file)[0] if file is not None else None
            return context_of_text(left_context, language=language, window_lines=window, path=path)
        if file is None:
            raise RetrievalError("give a file and line, or a left-context string")
        return context_at(self.repo, file, line, column, language=language, window_lines=window)

    def _imports(self, ctx: LocalContext) -> dict[str, str]:
        """The in-repo files the cursor's file imports from, looked up in the grep route's
        file list (what rg searches) rather than with a ``stat`` per candidate path (a
        Python import has up to 20). Python uses the list only once it is listed: a cold
        first pass walks the repository, which is what reports unreadable folders and
        odd file names as skips."""
        if not ctx.imports:
            return {}
        known = None
        if self.grep is not None and ctx.lang in ("java", "python"):
            with contextlib.suppress(SearchError):  # listing past the timeout: stat instead
                known = self.grep.file_set(ctx.lang, list_now=ctx.lang == "java")
        return resolve_imports(ctx, self.repo, known, self.files.lines)

    # -- planning --------------------------------------------------------------------
    def _plan(self, ctx: LocalContext, imported: dict[str, str]) -> QueryPlan:
        if self.router is not None:
            return self.router.plan(ctx, imported)
        if self.settings.router == "llm":
            from greprag.router.llm import LLMRouter

            try:  # the model's queries, and the probes the offline router never goes without
                plan = LLMRouter.from_settings(self.settings).plan(ctx, imported)
                return self.offline.complete(plan, ctx, imported)
            except RouterError as exc:
                plan = self.offline.plan(ctx, imported)
                plan.fallbacks.append(f"llm router failed, used offline router: {exc.reason}")
                return plan
        return self.offline.plan(ctx, imported)

    def plan(self, file=None, line=None, column=None, *, left_context=None, language=None):
        """The query plan only (what ``greprag queries`` prints)."""
        ctx = self.local_context(file, line, column, left_context=left_context, language=language)
        plan = self._plan(ctx, self._imports(ctx))
        plan.fallbacks[:0] = self.settings.notes
        return plan

    # -- the whole retrieval ---------------------------------------------------------
    def retrieve(
        self,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        *,
        left_context: str | None = None,
        language: str | None = None,
        budget: int | None = None,
    ) -> Result:
        """Context for the cursor at (file, line, column), or after ``left_context``;
        ``budget`` (tokens) overrides the setting for this call.

        >>> result = Retriever("path/to/repo").retrieve(file="pkg/mod.py", line=42, column=8)
        >>> print(result.context)              # prompt-ready, blocks under path headers
        >>> [(b.path, b.start_line, b.end_line) for b in result.blocks]
        """
        s = self.settings if budget is None else replace(self.settings, budget=budget).validate()
        with self._warmer.retrieving():
            clock = Clock()
            ctx = self.local_context(
                file, line, column, left_context=left_context, language=language
            )
            result = self._retrieve(ctx, s, clock)
            self._retrievals += 1
            if self._retrievals >= 2:  # a long-lived retriever
                self._warm(ctx.lang)
            return result

    def _warm(self, lang: str | None) -> None:
        """Queue the warming of ``lang``'s listed files, once per language."""
        if self.grep is None or lang in self._warming or get_language(lang) is None:
            return
        listed = self.grep.fresh_files(lang)
        if listed:
            self._warming.add(lang)
            self._warmer.warm(listed)

    def warmed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the per-file caches to be warm (a retriever
        warms them while idle from its second retrieval on: ``greprag.warm``); whether
        they are."""
        return self._warmer.wait(timeout)

    def _retrieve(self, ctx: LocalContext, s: Settings, clock: Clock) -> Result:
        imported = self._imports(ctx)  # lists a Java repository: similar code starts now
        files = FileCache(self.repo, self.files)
        current = cursor_file(ctx, files.get, s.include_current_file)
        request = RouteRequest(
            QueryPlan(queries=[]),
            ctx,
            files,
            current=current,
            cursor_line=ctx.line,
            k=s.dense_k,
            imported=imported,
        )
        request, started = self._start_alongside(request)  # runs while the plan is made
        clock.lap("context")
        plan = self._plan(ctx, imported)
        clock.lap("router")
        request = replace(request, plan=plan)
        hits = self._search(request, started, s.rerank)
        clock.lap("grep")  # every always-on route; each also reports its own time
        clock.timings.update({k: v for k, v in hits.timings.items() if k != "grep"})
        lang = get_language(ctx.lang)
        ranked = score_candidates(
            hits.candidates,
            window=ctx.window,
            plan=plan,
            imported=imported,
            method=s.rerank,
            weights=self.weights.mixed(lang.bm25_share if lang else None),
            package=PackageScope.of(ctx),
            prefix=ctx.prefix,
            lines_of=files.lines.get,
        )
        clock.lap("rerank")
        routes = {"grep": "always on"}
        if s.routes != "grep":
            joined = self.dense.join(request, hits, ranked)
            ranked = joined.ranked
            routes.update(joined.routes)
            hits.notes += joined.notes
            hits.skipped += joined.skipped
            clock.timings.update(joined.timings)
            clock.lap("dense_join")  # choosing, and the dense search when it ran
        assembly = assemble(
            ranked,
            plan=plan,
            settings=s,
            lines_of=request.files.get,
            expand=BlockWidener(files.get, current),
            current=current,
            twin=ctx.enclosing_function if ctx.empty_body else None,
        )
        clock.lap("dedup_pack")
        packed = assembly.packed
        return Result(
            blocks=packed.blocks,
            context=packed.context,
            tokens=packed.tokens,
            queries=list(plan.queries),
            timings=clock.total(),
            router=plan.router,
            fallbacks=[*s.notes, *plan.fallbacks, *hits.notes],
            skipped=hits.skipped,
            dropped=packed.dropped,
            routes=routes,
            explain=explain_retrieval(
                ctx,
                imported,
                plan,
                hits.stats,
                len(hits.candidates),
                assembly.emitted,
                current.runs,
            ),
        )

    def invalidate(self, paths: Iterable[str] | None = None) -> None:
        """Files changed on disk (repo-relative paths; None: anything may have): drop what
        was kept about them. Kept lines are checked against each file's stat anyway; this
        drops them at once (a file watcher's hook), and the grep route's file lists when
        files came or went (the dense index: ``refresh`` brings it up to date)."""
        changed = None if paths is None else list(paths)
        self.files.invalidate(changed)
        if self.grep is not None:
            self.grep.invalidate(changed)

    def refresh(self) -> int:
        """Bring the dense index up to date now (a warm process calls this in the
        background after ``invalidate``); files updated, 0 without a usable index."""
        return self.dense.refresh()

    # -- questions over docs and code ------------------------------------------------
    def search(
        self,
        query: str,
        *,
        budget: int | None = None,
        k: int | None = None,
        kind: str = "all",
    ) -> Result:
        """The documentation sections and code definitions that answer a plain-language
        question, at most ``k`` blocks within ``budget`` tokens; ``kind`` is ``all``,
        ``code`` or ``docs`` (docstrings count as docs). Blocks of HTML pages carry an
        ``anchor`` (``path#anchor``).

        >>> result = Retriever("path/to/repo").search("how do I retry after a timeout")
        >>> [(b.path, b.start_line, b.end_line, b.anchor) for b in result.blocks]
        """
        if self._docs is None:
            from docs_mode.search import DocsSearch  # docs mode loads on the first question

            self._docs = DocsSearch(self.repo, self.settings, dense=self.dense)
        with self._warmer.retrieving():  # no warming while a question is answered either
            return self._docs.search(query, budget=budget, k=k, kind=kind)

    def ask(
        self,
        question: str,
        *,
        model: str | None = None,
        budget: int | None = None,
        k: int | None = None,
        kind: str = "all",
        on_text: Callable[[str], None] | None = None,
    ) -> Answer:
        """Answer ``question`` from what ``search`` finds: the configured LLM (``model``,
        else the ``model`` setting) reads the passages as quoted data and cites them;
        citations of anything not given are removed. The checked text streams to
        ``on_text``. No model, or a failing one, leaves ``Answer.error`` set and the
        passages in ``Answer.result``.

        >>> answer = Retriever("path/to/repo").ask("how do I retry after a timeout?")
        >>> answer.text, [c.label for c in answer.citations]
        """
        from docs_mode.ask import answer_with_settings

        result = self.search(question, budget=budget, k=k, kind=kind)
        return answer_with_settings(question, result, self.settings, model=model, on_text=on_text)

    def _start_alongside(
        self, request: RouteRequest
    ) -> tuple[RouteRequest, list[Callable[[], RouteHits] | None]]:
        """Start the similar route, which needs no plan: once the repository is listed,
        its rg pass runs in the background while the plan is made and the other routes
        search, and the rg processes share the cores (unless the worker's word index
        answers it without rg). Per route, what finishes it (None: a route that searches
        when asked)."""
        alongside = [r for r in self.routes if isinstance(r, SimilarRoute)]
        if any(r.reads_alongside(request.ctx.lang) for r in alongside):
            request = replace(request, rg_threads=shared_threads(2))
        started = [r.start(request) if isinstance(r, SimilarRoute) else None for r in self.routes]
        return request, started

    def _search(
        self, request: RouteRequest, started: list[Callable[[], RouteHits] | None], rerank: str
    ) -> RouteHits:
        """Every always-on route, their hits in one list (``started``: see
        ``_start_alongside``). Before waiting on a route started alongside, the hits so
        far are tokenized for the re-ranking (``rerank``), which would do it later."""
        merged = RouteHits("+".join(r.name for r in self.routes), [])
        for route, finish in zip(self.routes, started, strict=True):
            if finish is not None:
                tokenize_ahead(merged.candidates, rerank, request.files.lines.get)
            hits = finish() if finish is not None else route.search(request)
            merged.candidates += hits.candidates
            merged.skipped += hits.skipped
            merged.notes += hits.notes
            merged.stats += hits.stats
            merged.timings.update(hits.timings)
        return merged
