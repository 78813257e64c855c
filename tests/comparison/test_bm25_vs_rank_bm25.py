"""Our postings-based BM25 against rank_bm25's BM25Okapi, on real candidates.

The candidates are what the grep route really returns for cursors in click's sources
(every 40th code line of every module); the query is each cursor's window, tokenized the
way retrieval tokenizes it. Scores must match to 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rank_bm25 import BM25Okapi

from greprag import Retriever
from greprag.cursor_file import CursorFile
from greprag.files import FileCache
from greprag.fusion.bm25 import bm25_scores, code_tokens
from greprag.routes import RouteRequest

pytestmark = pytest.mark.comparison


def test_bm25_matches_rank_bm25_on_grep_candidates(click_source: Path) -> None:
    package = next(p for p in click_source.glob("*/src/click") if p.is_dir())
    retriever = Retriever(package.parent.parent, routes="grep")
    compared = 0
    for module in sorted(package.glob("*.py")):
        lines = module.read_text(encoding="utf-8").splitlines()
        for number in range(20, len(lines), 40):
            if not lines[number - 1].strip():
                continue
            ctx = retriever.local_context(module, number)
            plan = retriever.plan(module, number)
            request = RouteRequest(
                plan, ctx, FileCache(retriever.repo), current=CursorFile(ctx.path)
            )
            candidates = retriever.grep.search(request).candidates
            if len(candidates) < 3:
                continue
            docs = [code_tokens(c.text) for c in candidates]
            query = code_tokens(ctx.window)
            expected = list(BM25Okapi(docs).get_scores(query))
            assert bm25_scores(docs, query) == pytest.approx(expected, rel=1e-9, abs=1e-12)
            compared += 1
    assert compared >= 30, f"only {compared} cursors had enough candidates"
