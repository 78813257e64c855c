"""The code tokenizer and BM25 re-ranking."""

from __future__ import annotations

import pytest

from greprag.fusion.bm25 import _text_tokens, code_tokens, rerank
from greprag.models import Candidate


def test_code_tokens_split_identifiers_and_keep_them_whole():
    tokens = code_tokens("self.loader.load_batch(getUserById)")
    assert {"load_batch", "load", "batch", "getuserbyid", "get", "user", "by", "id"} <= set(tokens)
    assert "self" not in tokens


def test_bm25_prefers_the_rare_identifier_over_the_generic_one():
    docs = [
        Candidate("a.py", 1, 3, "def run(config):\n    return config.run()"),
        Candidate("b.py", 1, 3, "def load_batch(self, batch_id):\n    return rows"),
        Candidate("c.py", 1, 3, "config = run(config)"),
    ]
    ranked = rerank(docs, "data = self.loader.load_batch(batch_id) ; config.run()", "bm25")
    assert ranked[0].path == "b.py"


def test_bm25_scores_match_rank_bm25():
    from rank_bm25 import BM25Okapi

    from greprag.fusion.bm25 import bm25_scores

    docs = [
        code_tokens(t)
        for t in (
            "class DataLoader:\n    def load_batch(self, index): return self.rows[index]",
            "def run(config):\n    return config.run()",
            "loader = DataLoader(path)\nrows = loader.load_batch(0)",
            "config = load_config()\nrun(config)",
            "def transform(self, data): return [scale(r) for r in data]",
        )
    ]
    query = code_tokens("data = self.loader.load_batch(index) # config run run")
    expected = BM25Okapi(docs).get_scores(query)
    assert bm25_scores(docs, query) == pytest.approx(list(expected), rel=1e-9, abs=1e-12)


def test_a_candidates_tokens_read_line_by_line_are_its_tokens_read_whole():
    """Candidates are tokenized per line (cached across overlapping windows): no token
    may span a newline, whatever sits at the line ends."""
    text = "getUserById(\n  load_batch$1)\n\n42abc\r\n$ref.x_\n\tclass Foo_Bar:"
    assert list(_text_tokens(text)) == code_tokens(text)


def test_tokenizing_ahead_fills_the_cache_the_rerank_reads_and_changes_no_score():
    from greprag.fusion.bm25 import rerank_scores, tokenize_ahead

    texts = ["def fetch_rows_ahead(limit):\n    return query(limit)", "class RowsAhead:\n    pass"]
    query = "rows = fetch_rows_ahead(10)"
    _text_tokens.cache_clear()
    cold = rerank_scores(texts, query)
    _text_tokens.cache_clear()
    tokenize_ahead(texts, "none")  # nothing to rank by: nothing tokenized
    assert _text_tokens.cache_info().currsize == 0
    tokenize_ahead(texts, "bm25")
    assert _text_tokens.cache_info().currsize == len(texts)
    before = _text_tokens.cache_info().hits
    assert rerank_scores(texts, query) == cold
    assert _text_tokens.cache_info().hits == before + len(texts)
