"""The code tokenizer and BM25 re-ranking."""

from __future__ import annotations

import random
from pathlib import Path

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
    from greprag.fusion.bm25 import candidate_scores, tokenize_ahead

    texts = ["def fetch_rows_ahead(limit):\n    return query(limit)", "class RowsAhead:\n    pass"]
    candidates = [Candidate(f"{i}.py", 1, 2, text) for i, text in enumerate(texts)]
    query = "rows = fetch_rows_ahead(10)"
    _text_tokens.cache_clear()
    cold = candidate_scores(candidates, query)
    _text_tokens.cache_clear()
    tokenize_ahead(candidates, "none")  # nothing to rank by: nothing tokenized
    assert _text_tokens.cache_info().currsize == 0
    tokenize_ahead(candidates, "bm25")
    assert _text_tokens.cache_info().currsize == len(texts)
    before = _text_tokens.cache_info().hits
    assert candidate_scores(candidates, query) == cold
    assert _text_tokens.cache_info().hits == before + len(texts)


def _tokenized_ahead(lines) -> None:
    from greprag.fusion.bm25 import tokens_ahead

    steps = sum(1 for _ in tokens_ahead(lines, 7))
    assert steps == -(-len(lines) // 7)


def test_a_file_tokenized_ahead_gives_each_range_its_texts_tokens(monkeypatch):
    """Real source files, random ranges: a range read off its file's tokens is its
    text's tokens, and the scores are those of the texts."""
    from greprag.files import LinesMemo, split_lines
    from greprag.fusion import bm25

    monkeypatch.setattr(bm25, "_FILE_TOKENS", LinesMemo(64))
    package = Path(bm25.__file__).parents[1]
    files = {
        str(p.relative_to(package)): tuple(split_lines(p.read_text()))
        for p in sorted(package.rglob("*.py"))[:40]
    }
    for lines in files.values():
        _tokenized_ahead(lines)
    rng = random.Random(7)
    candidates = []
    for path, lines in sorted(files.items()):
        for _ in range(3):
            start = rng.randint(1, len(lines))
            end = min(len(lines), start + rng.randint(0, 30))
            candidates.append(Candidate(path, start, end, "\n".join(lines[start - 1 : end])))
    for cand in candidates:
        lines = files[cand.path]
        assert list(bm25._candidate_tokens(cand, lines)) == code_tokens(cand.text)
    query = "def rerank_scores(texts, query_text, method):\n    scorer = _scorer(method)"
    _text_tokens.cache_clear()
    bm25.tokenize_ahead(candidates, "bm25", files.get)  # nothing to do ahead for them
    by_file = bm25.candidate_scores(candidates, query, "bm25", files.get)
    assert _text_tokens.cache_info().currsize == 0  # every one read off its file
    assert by_file == bm25.rerank_scores([c.text for c in candidates], query)


def test_a_candidate_that_is_not_its_files_lines_is_tokenized_from_its_text(monkeypatch):
    """The editor's unsaved buffer, say: the candidate's text differs from the lines the
    file was tokenized from, and its own text's tokens are the ones scored."""
    from greprag.files import LinesMemo
    from greprag.fusion import bm25

    monkeypatch.setattr(bm25, "_FILE_TOKENS", LinesMemo(4))
    lines = ("def saved_name(x):", "    return x")
    _tokenized_ahead(lines)
    edited = Candidate("m.py", 1, 2, "def edited_name(x):\n    return x")
    assert list(bm25._candidate_tokens(edited, lines)) == code_tokens(edited.text)
    past_end = Candidate("m.py", 2, 3, "    return x\nextra_line")
    assert list(bm25._candidate_tokens(past_end, lines)) == code_tokens(past_end.text)
    assert list(bm25._candidate_tokens(Candidate("m.py", 1, 1, lines[0]), lines)) == [
        "saved_name",
        "saved",
        "name",
        "x",
    ]


def test_tokens_room_ends_when_the_memo_is_full(monkeypatch):
    from greprag.files import LinesMemo
    from greprag.fusion import bm25

    monkeypatch.setattr(bm25, "_FILE_TOKENS", LinesMemo(2))
    assert bm25.tokens_room()
    _tokenized_ahead(("a = 1",))
    assert bm25.tokens_room()
    _tokenized_ahead(("b = 2",))
    assert not bm25.tokens_room()
