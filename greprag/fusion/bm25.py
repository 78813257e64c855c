"""Identifier-weighted re-ranking of candidates against the local context.

The tokenizer is code-aware: ``getUserById`` yields ``getuserbyid`` (the whole
identifier, so exact matches weigh most) plus ``get``, ``user``, ``by``, ``id``;
``load_batch`` yields ``load_batch``, ``load``, ``batch``.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from greprag.files import LinesMemo
from greprag.languages import words
from greprag.models import Candidate

_WORD_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = words(
    """
    self this cls return def class import from if else elif for while in is not and
    or none null true false new public private protected static final void int str
    """
)


@lru_cache(maxsize=1 << 16)
def split_identifier(word: str) -> tuple[str, ...]:
    """Parts of an identifier: camelCase and snake_case pieces, lowercased."""
    parts: list[str] = []
    for chunk in word.split("_"):
        parts.extend(p.lower() for p in _CAMEL_RE.findall(chunk))
    return tuple(p for p in parts if p)


def code_tokens(text: str) -> list[str]:
    """Tokens for BM25: each identifier whole (lowercased) and its parts."""
    return list(chain.from_iterable(map(_word_tokens, _WORD_RE.findall(text))))


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[str, ...]:
    """One word's tokens: the word lowercased, then its parts (none for a stop word)."""
    lowered = sys.intern(word.lower())  # one string per token in files tokenized ahead
    if lowered in _STOP:
        return ()
    parts = split_identifier(word)
    if len(parts) > 1:
        return (lowered, *(sys.intern(p) for p in parts if p not in _STOP))
    return (lowered,)


def bm25_scores(
    documents: Sequence[list[str]],
    query: list[str],
    *,
    k1: float = 1.5,
    b: float = 0.75,
    epsilon: float = 0.25,
) -> list[float]:
    """BM25 Okapi score of each tokenized document for the tokenized query.

    The same formula as ``rank_bm25.BM25Okapi`` (idf floored at ``epsilon`` × mean idf;
    a test checks the scores match), computed over postings in pure Python: on a few
    hundred candidates that is faster than building numpy arrays, and the CLI does not
    pay numpy's import.
    """
    n_docs = len(documents)
    if not n_docs or not query:
        return [0.0] * n_docs
    freqs: list[Counter[str]] = [Counter(doc) for doc in documents]
    lengths = [len(doc) for doc in documents]
    avgdl = sum(lengths) / n_docs or 1.0
    # document frequencies in C; every word's idf only for the mean (words with the same
    # frequency share it), summed in first-occurrence order as a per-word dict would be
    frequency = Counter(chain.from_iterable(freqs))
    if not frequency:  # no document has a token (blank or punctuation-only candidates)
        return [0.0] * n_docs
    by_count = {c: math.log(n_docs - c + 0.5) - math.log(c + 0.5) for c in set(frequency.values())}
    floor = epsilon * (sum(map(by_count.__getitem__, frequency.values())) / len(frequency))
    wanted = Counter(query)
    postings: dict[str, list[int]] = {word: [] for word in wanted}
    for i, freq in enumerate(freqs):
        for word in freq.keys() & postings.keys():
            postings[word].append(i)
    norms = [k1 * (1 - b + b * length / avgdl) for length in lengths]
    scores = [0.0] * n_docs
    for word, times in wanted.items():
        docs = postings[word]
        if not docs:
            continue
        idf = by_count[len(docs)]
        weight = idf if idf >= 0 else floor
        if not weight:
            continue
        for i in docs:
            tf = freqs[i][word]
            scores[i] += times * weight * tf * (k1 + 1) / (tf + norms[i])
    return scores


def jaccard_scores(documents: Sequence[Iterable[str]], query: Iterable[str]) -> list[float]:
    """Jaccard similarity of each document's token set with the query's (Naive GrepRAG)."""
    query_set = set(query)
    scores = []
    for doc in documents:
        doc_set = set(doc)
        union = len(doc_set | query_set)
        scores.append(len(doc_set & query_set) / union if union else 0.0)
    return scores


Scorer = Callable[[Sequence[list[str]], list[str]], list[float]]
# Re-rankers by name (the ``rerank`` setting); ``none`` keeps the route's own order.
RERANKERS: dict[str, Scorer | None] = {
    "bm25": bm25_scores,
    "jaccard": jaccard_scores,
    "none": None,
}


def rerank_scores(texts: Sequence[str], query_text: str, method: str = "bm25") -> list[float]:
    """The score of each text against ``query_text`` by ``method`` (all 0.0 for ``none``)."""
    scorer = _scorer(method)
    if scorer is None or not texts:
        return [0.0] * len(texts)
    return scorer([list(_text_tokens(text)) for text in texts], code_tokens(query_text))


def candidate_scores(
    candidates: Sequence[Candidate],
    query_text: str,
    method: str = "bm25",
    lines_of: Callable[[str], Sequence[str] | None] = lambda path: None,
) -> list[float]:
    """``rerank_scores`` of the candidates' texts. A candidate cut from lines that
    ``lines_of`` gives for its path, a file tokenized ahead (``tokens_ahead``), takes its
    tokens from the file's: the same tokens, for a slice."""
    scorer = _scorer(method)
    if scorer is None or not candidates:
        return [0.0] * len(candidates)
    documents = [list(_candidate_tokens(c, lines_of(c.path))) for c in candidates]
    return scorer(documents, code_tokens(query_text))


def _scorer(method: str) -> Scorer | None:
    if method not in RERANKERS:
        raise ValueError(f"unknown rerank method: {method!r} ({', '.join(RERANKERS)})")
    return RERANKERS[method]


def tokenize_ahead(
    candidates: Iterable[Candidate],
    method: str = "bm25",
    lines_of: Callable[[str], Sequence[str] | None] = lambda path: None,
) -> None:
    """Tokenize the candidates' texts into the cache ``candidate_scores`` reads, ahead of
    it: a caller waiting on another route does it meanwhile (nothing for ``none``, nor
    for a file tokenized ahead, whose candidates take slices of its tokens)."""
    if RERANKERS.get(method) is not None:
        for cand in candidates:
            lines = lines_of(cand.path)
            if lines is None or _FILE_TOKENS.peek(lines, "tokens") is None:
                _text_tokens(cand.text)


@lru_cache(maxsize=8192)
def _text_tokens(text: str) -> tuple[str, ...]:
    """``code_tokens`` of a candidate's text, remembered: the same windows come back
    from one retrieval to the next. Tokenized line by line (no token spans a newline):
    a retrieval's windows overlap, and a line is tokenized once."""
    return tuple(chain.from_iterable(map(_line_tokens, text.split("\n"))))


@lru_cache(maxsize=1 << 16)
def _line_tokens(line: str) -> tuple[str, ...]:
    return tuple(code_tokens(line))


@dataclass(frozen=True)
class _FileTokens:
    """A file's tokens in order, and where each line's tokens begin: line n's are
    ``tokens[starts[n - 1] : starts[n]]``."""

    tokens: tuple[str, ...]
    starts: array


_FILE_TOKENS = LinesMemo(4096)  # per file content; filled by ``tokens_ahead`` only
# tokens ``tokens_ahead`` keeps over the process's life (~17 MB of references): a
# 250k-line corpus whole (sqlalchemy 0.9 M, jdk17 1.3 M), a part of a bigger one
_AHEAD_MAX_TOKENS = 1 << 21
_kept_ahead = 0


def tokens_ahead(lines: Sequence[str], step: int) -> Iterator[None]:
    """Tokenize a file's lines for ``candidate_scores`` ahead of it, ``step`` lines at a
    time (yielding between steps), and keep them (``_FILE_TOKENS``)."""
    global _kept_ahead
    tokens: list[str] = []
    starts = array("I", [0])
    for low in range(0, len(lines), step):
        for line in lines[low : low + step]:
            tokens += code_tokens(line)  # not ``_line_tokens``: its room is the retrievals'
            starts.append(len(tokens))
        yield
    made = _FileTokens(tuple(tokens), starts)
    _FILE_TOKENS.get(lines, "tokens", lambda: made)
    _kept_ahead += len(tokens)


def tokens_room() -> bool:
    """Whether ``tokens_ahead`` may keep another file (warming stops when it may not):
    it has kept fewer than ``_AHEAD_MAX_TOKENS`` tokens in all, into a memo not full."""
    return _kept_ahead < _AHEAD_MAX_TOKENS and not _FILE_TOKENS.full()


def _candidate_tokens(cand: Candidate, lines: Sequence[str] | None) -> Sequence[str]:
    """``cand``'s tokens: a slice of its file's, when that file (``lines``) was
    tokenized ahead and ``cand`` is its lines; else its text's, tokenized line by line."""
    made: _FileTokens | None = None if lines is None else _FILE_TOKENS.peek(lines, "tokens")
    if (
        made is not None
        and cand.end_line <= len(lines)
        and cand.text == "\n".join(lines[cand.start_line - 1 : cand.end_line])
    ):
        return made.tokens[made.starts[cand.start_line - 1] : made.starts[cand.end_line]]
    return _text_tokens(cand.text)


def rerank(candidates: list[Candidate], query_text: str, method: str = "bm25") -> list[Candidate]:
    """New candidates scored against ``query_text`` by ``method``, best first (stable, so
    with ``none`` the route's own order is kept and the scores are left as they were)."""
    if method == "none":
        return list(candidates)
    scores = rerank_scores([c.text for c in candidates], query_text, method)
    scored = [c.rescored(s) for c, s in zip(candidates, scores, strict=True)]
    return sorted(scored, key=lambda c: -c.score)
