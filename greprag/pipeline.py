"""The Retriever: local context → router → routes → re-rank → dedup → fusion → budget."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from greprag import blocks as syntax
from greprag.config import Settings, load_settings
from greprag.context import LocalContext, build_local_context
from greprag.errors import RetrievalError
from greprag.files import read_text
from greprag.fusion.bm25 import rerank
from greprag.fusion.dedup import BlockExpansion, MergedRange, merge_ranges, no_dedup, take_pool
from greprag.fusion.fuse import fuse
from greprag.fusion.pack import pack
from greprag.imports import resolve_imports
from greprag.languages import get_language, language_for_path
from greprag.local_blocks import LocalExpander
from greprag.models import Candidate, Drop, Query, QueryPlan, Result
from greprag.router import OfflineRouter
from greprag.router.names import external_names
from greprag.router.probes import receiver_types, type_probes
from greprag.routes.grep import FileCache, GrepHits, GrepRoute
from greprag.tokens import preload_encoding

SMALL_FILE_LINES = 80
SECOND_HOP_TYPES = 3
MIN_BLOCK_CAP = 256  # small budgets still take a whole block that fits


def _import_files(query: Query, imported: dict[str, str]) -> set[str]:
    """Files the file's imports point to for the names a query probes."""
    return set(query.paths) | {imported[n] for n in query.identifier.split(",") if n in imported}


class Retriever:
    """Retrieve cross-file context for a cursor in ``repo`` (see ``retrieve``)."""

    def __init__(self, repo: str | Path, **settings: Any) -> None:
        root = Path(repo).expanduser()
        if not root.is_dir():
            raise RetrievalError(f"repository not found: {repo}")
        self.repo = root.resolve()
        self.settings: Settings = load_settings(self.repo, **settings)
        self.grep = GrepRoute(
            self.repo,
            rg_path=self.settings.rg_path or None,
            max_filesize=self.settings.max_filesize,
            max_line_chars=self.settings.max_line_chars,
            max_count_per_file=self.settings.max_count_per_file,
            flood_files=self.settings.flood_files,
            max_candidates=self.settings.max_candidates,
            file_list_ttl=self.settings.file_list_ttl,
        )
        self.offline = OfflineRouter.from_settings(self.settings)
        preload_encoding(self.settings.encoding)  # overlaps the tokenizer load with rg
        self._dense = None  # DenseRoute, created on first use (it loads a model)

    # -- inputs ----------------------------------------------------------------------
    def _relative(self, file: str | Path) -> str:
        path = Path(file)
        full = (path if path.is_absolute() else self.repo / path).resolve()
        try:
            relative = full.relative_to(self.repo)
        except ValueError:
            raise RetrievalError(f"file is outside the repository: {file}") from None
        if not full.is_file():
            raise RetrievalError(f"file not found: {file}")
        return relative.as_posix()

    def local_context(
        self,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        *,
        left_context: str | None = None,
        language: str | None = None,
    ) -> LocalContext:
        """The LocalContext for a file position or for a left-context string."""
        window = self.settings.window_lines
        if file is None:
            if left_context is None:
                raise RetrievalError("give a file and line, or a left-context string")
            lang = get_language(language)
            if language and lang is None:
                raise RetrievalError(f"unknown language: {language}")
            return build_local_context(
                left_context, lang=lang.name if lang else None, window_lines=window
            )
        path = self._relative(file)
        text = read_text(self.repo, path)
        if text is None:
            raise RetrievalError(f"cannot read {path}")
        lines = text.split("\n")
        if line is None:
            raise RetrievalError("a line number is needed with --file")
        if not 1 <= line <= len(lines):
            raise RetrievalError(f"line {line} is past the end of {path} ({len(lines)} lines)")
        current = lines[line - 1]
        col = len(current) if column is None else column
        if not 0 <= col <= len(current):
            raise RetrievalError(
                f"column {col} is past the end of line {line} ({len(current)} chars)"
            )
        before = "\n".join([*lines[: line - 1], current[:col]])
        lang = get_language(language) or language_for_path(path)
        return build_local_context(
            before,
            path=path,
            lang=lang.name if lang else None,
            line=line,
            column=col,
            window_lines=window,
        )

    # -- planning --------------------------------------------------------------------
    def _plan(self, ctx: LocalContext, imported: dict[str, str]) -> QueryPlan:
        if self.settings.router == "llm":
            from greprag.errors import RouterError
            from greprag.router.llm import LLMRouter

            try:
                plan = LLMRouter.from_settings(self.settings).plan(ctx)
            except RouterError as exc:
                plan = self.offline.plan(ctx, imported)
                plan.fallbacks.append(f"llm router failed, used offline router: {exc.reason}")
            return plan
        return self.offline.plan(ctx, imported)

    def plan(self, file=None, line=None, column=None, *, left_context=None, language=None):
        """The query plan only (what ``greprag queries`` prints)."""
        ctx = self.local_context(file, line, column, left_context=left_context, language=language)
        imported = self._imports(ctx)
        plan = self._plan(ctx, imported)
        plan.fallbacks[:0] = self.settings.notes
        return plan

    def _imports(self, ctx: LocalContext) -> dict[str, str]:
        if not ctx.imports:
            return {}
        known = set(self.grep.files("java")) if ctx.lang == "java" else None
        return resolve_imports(ctx, self.repo, known)

    # -- scoring ---------------------------------------------------------------------
    def _score(
        self,
        candidates: list[Candidate],
        ctx: LocalContext,
        plan: QueryPlan,
        imported: dict[str, str],
    ) -> list[Candidate]:
        s = self.settings
        query_text = ctx.window
        if s.rerank == "jaccard":
            return rerank(candidates, query_text, "jaccard")
        if s.rerank == "bm25":
            rerank(candidates, query_text, "bm25")
            top = max((c.score for c in candidates), default=0.0) or 1.0
            bm25 = {id(c): c.score / top for c in candidates}
        else:
            bm25 = {id(c): 0.0 for c in candidates}
        for c in candidates:
            query = plan.queries[c.query_index] if c.query_index >= 0 else None
            purpose = query.purpose if query else ""
            score = s.bm25_weight * bm25[id(c)] + s.prior_weight * c.prior
            if purpose != "usage" and query and c.path in _import_files(query, imported):
                score += s.import_bonus  # the definition sits where the import points
            if purpose == "definition":
                score += s.definition_bonus
            c.score = score
        return sorted(candidates, key=lambda c: -c.score)

    def _expander(self, files: FileCache, ctx: LocalContext):
        """Widen (path, start, end) to whole blocks: a local scan, tree-sitter if unsure."""
        local = LocalExpander()

        def expand(path: str, start: int, end: int) -> tuple[int, int]:
            lines = files.get(path)
            lang = language_for_path(path)
            name = lang.name if lang else None
            widened = local.expand(path, lines, name, start, end)
            if widened is None:
                text = "\n".join(lines)
                spans = syntax.file_spans(path, text, name)
                widened = syntax.expand_range(text, name, start, end, spans)
            start, end = widened
            if len(lines) <= SMALL_FILE_LINES and (end - start + 1) * 2 >= len(lines):
                start, end = 1, len(lines)  # most of a small file: take its imports/constants too
            if path == ctx.path:  # the current file's lines are admitted above the cursor only
                end = min(end, ctx.line - 1)
            return start, end

        return expand

    # -- the whole retrieval ---------------------------------------------------------
    def retrieve(
        self,
        file: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        *,
        left_context: str | None = None,
        language: str | None = None,
    ) -> Result:
        """Context for the cursor at (file, line, column), or after ``left_context``."""
        s = self.settings
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        ctx = self.local_context(file, line, column, left_context=left_context, language=language)
        imported = self._imports(ctx)
        timings["context"] = (time.perf_counter() - t0) * 1000
        t = time.perf_counter()
        plan = self._plan(ctx, imported)
        timings["router"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        files = FileCache(self.repo)
        hits: GrepHits = self.grep.search(
            plan,
            exclude_path=ctx.path,
            cursor_line=ctx.line,
            admit_above_cursor=s.include_current_file == "above",
            files=files,
        )
        hits = self._second_hop(ctx, plan, hits, files, imported)
        timings["grep"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        ranked = self._score(hits.candidates, ctx, plan, imported)
        timings["rerank"] = (time.perf_counter() - t) * 1000

        routes: dict[str, str] = {"grep": "always on"}
        notes: list[str] = []
        if s.routes != "grep":
            ranked = self._with_dense(ctx, plan, hits, ranked, routes, notes, timings)

        t = time.perf_counter()
        expansion: BlockExpansion | None = None
        if s.dedup:
            merged = merge_ranges(take_pool(ranked, s.dedup_pool), gap=s.merge_gap)
            for item in merged:
                item.usage_only = bool(item.queries) and all(
                    0 <= i < len(plan.queries) and plan.queries[i].purpose == "usage"
                    for i in item.queries
                )
            merged = self._keep_current_file_above(merged, ctx)
            expansion = BlockExpansion(merged, self._expander(files, ctx), gap=s.merge_gap)
            ranges: Iterable[MergedRange] = expansion
        else:
            ranges = self._keep_current_file_above(no_dedup(ranked), ctx)
        packed = pack(
            ranges,
            files.get,
            budget=s.budget,
            max_block_tokens=max(MIN_BLOCK_CAP, int(s.budget * s.max_block_share)),
            max_usage_tokens=s.max_usage_tokens,
            encoding=s.encoding,
        )
        if expansion is not None:
            packed.dropped += [
                Drop(r.path, r.start_line, r.end_line, "budget full", round(r.score, 4))
                for r in expansion.remaining()
            ]
        timings["dedup_pack"] = (time.perf_counter() - t) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000

        explain = {
            "local_context": {
                "path": ctx.path,
                "lang": ctx.lang,
                "line": ctx.line,
                "column": ctx.column,
                "enclosing_class": ctx.enclosing_class,
                "enclosing_function": ctx.enclosing_function,
                "class_bases": ctx.class_bases,
                "empty_body": ctx.empty_body,
                "imports_in_repo": imported,
            },
            "queries": [
                {
                    "pattern": q.pattern,
                    "kind": q.kind,
                    "purpose": q.purpose,
                    "weight": round(q.weight, 3),
                    "hits": st.hits,
                    "files": st.files,
                    "kept": st.kept,
                    "note": st.note,
                }
                for q, st in zip(plan.queries, hits.stats, strict=True)
            ],
            "candidates": len(hits.candidates),
            "merged": [
                {
                    "path": r.path,
                    "start_line": r.start_line,
                    "end_line": r.end_line,
                    "members": r.members,
                    "score": round(r.score, 4),
                }
                for r in ([] if expansion is None else expansion.emitted())
                if r.members > 1
            ],
        }
        return Result(
            blocks=packed.blocks,
            context=packed.context,
            tokens=packed.tokens,
            queries=list(plan.queries),
            timings=timings,
            router=plan.router,
            fallbacks=[*s.notes, *plan.fallbacks, *notes],
            skipped=hits.skipped,
            dropped=packed.dropped,
            routes=routes,
            explain=explain,
        )

    def _second_hop(
        self,
        ctx: LocalContext,
        plan: QueryPlan,
        hits: GrepHits,
        files: FileCache,
        imported: dict[str, str],
    ) -> GrepHits:
        """``x.`` at the cursor with x's type unnamed: read x's assignments elsewhere
        (``self.x = Loader(...)``, ``x: Loader``) off the first pass and probe those types.
        """
        externals = external_names(ctx, set(imported))
        types = receiver_types(ctx, plan, hits.candidates, files.get, externals)
        if not types:
            return hits
        extra = type_probes(ctx.lang, types[:SECOND_HOP_TYPES], weight=0.9)
        second_plan = QueryPlan(queries=[*plan.queries, *extra], router=plan.router)
        more = self.grep.search(
            QueryPlan(queries=extra, router=plan.router),
            exclude_path=ctx.path,
            cursor_line=ctx.line,
            files=files,
        )
        offset = len(plan.queries)
        for cand in more.candidates:
            cand.query_index += offset
            cand.queries = tuple(i + offset for i in cand.queries)
        plan.queries[:] = second_plan.queries
        hits.stats += [
            replace(st, index=st.index + offset, note=st.note or "second hop") for st in more.stats
        ]
        hits.candidates += more.candidates
        return hits

    def _with_dense(
        self,
        ctx: LocalContext,
        plan: QueryPlan,
        hits: GrepHits,
        ranked: list[Candidate],
        routes: dict[str, str],
        notes: list[str],
        timings: dict[str, float],
    ) -> list[Candidate]:
        """Let the dense route join where grep evidence is weak, fusing the two rankings."""
        from greprag.adaptive import choose_routes
        from greprag.routes.dense import dense_available, dense_query_text

        s = self.settings
        chosen, reason = choose_routes(
            s.routes,
            grep_candidates=hits.candidates,
            queries=plan.queries,
            ctx=ctx,
            dense_installed=dense_available(),
        )
        if "dense" not in chosen:
            routes["dense"] = f"not run: {reason}"
            return ranked
        if s.routes == "auto" and not self._dense_indexed():
            routes["dense"] = f"not run: {reason}, but the repo has no index (greprag index)"
            return ranked
        t = time.perf_counter()
        dense = self._dense_route().search(dense_query_text(ctx), s.dense_k, exclude_path=ctx.path)
        timings.update(dense.timings)
        timings["dense"] = (time.perf_counter() - t) * 1000
        notes += [f"dense: {note}" for note in dense.notes]
        routes["dense"] = reason
        if "grep" not in chosen:
            routes["grep"] = "ran, but only dense was asked for"
            return dense.candidates
        return fuse(
            {"grep": ranked, "dense": dense.candidates},
            weights={"grep": 1.0, "dense": s.dense_weight},
        )

    def _dense_indexed(self) -> bool:
        """An index exists for this repo, model and backend (an old one would be all stale)."""
        from greprag.dense.embed import Embedder
        from greprag.dense.store import index_dir, snapshot_path

        s = self.settings
        folder = index_dir(self.repo, s.dense_cache())
        embedder = Embedder(s.dense_model or None, backend=s.dense_backend or None)
        return snapshot_path(folder, embedder.name).is_file()

    def _dense_route(self):  # -> greprag.routes.dense.DenseRoute
        if self._dense is None:
            from greprag.routes.dense import DenseRoute

            s = self.settings
            self._dense = DenseRoute(
                self.repo,
                model=s.dense_model or None,
                cache_dir=s.dense_cache(),
                stale_bound_s=s.stale_bound_s,
                backend=s.dense_backend or None,
                rg_path=s.rg_path or None,
            )
        return self._dense

    def _keep_current_file_above(
        self, ranges: list[MergedRange], ctx: LocalContext
    ) -> list[MergedRange]:
        """Block extension may reach past the cursor in the current file: clip or drop."""
        if ctx.path is None:
            return ranges
        kept = []
        for r in ranges:
            if r.path == ctx.path:
                if self.settings.include_current_file != "above" or r.start_line >= ctx.line:
                    continue
                r.end_line = min(r.end_line, ctx.line - 1)
            kept.append(r)
        return kept
