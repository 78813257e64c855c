"""The paper's sparse baselines over fixed line windows, packed into the same token budget.

- CrossCodeEval: BM25 (rank_bm25 ``BM25Okapi``) over 10-line chunks of every other file of
  the same language; query = the last 10 lines of the prompt.
- RepoCoder (sparse): Jaccard similarity over 20-line windows with stride 10; query = the
  last 20 lines of the prompt.

The index (chunking + BM25 construction) is built once per repository and timed apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from greprag.languages import get_language, language_for_path
from greprag.models import Block
from greprag.tokens import count_tokens

TOKEN_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+")
BLOCK_SEPARATOR = "\n\n"


def tokenize(text: str) -> list[str]:
    """Identifier and number tokens (code-agnostic, as the baselines' whitespace split)."""
    return TOKEN_RE.findall(text)


@dataclass
class Chunk:
    path: str
    start_line: int
    end_line: int
    text: str
    tokens: list[str] = field(default_factory=list)


def chunk_lines(path: str, text: str, size: int, stride: int) -> list[Chunk]:
    """Windows of ``size`` lines every ``stride`` lines (the last one may be shorter)."""
    lines = text.split("\n")
    chunks: list[Chunk] = []
    for start in range(0, max(len(lines), 1), stride):
        window = lines[start : start + size]
        body = "\n".join(window)
        if body.strip():
            chunks.append(Chunk(path, start + 1, start + len(window), body, tokenize(body)))
        if start + size >= len(lines):
            break
    return chunks


def repo_chunks(root: Path, files: list[str], lang: str, size: int, stride: int) -> list[Chunk]:
    """Chunks of every file of ``lang`` in the repository."""
    language = get_language(lang)
    chunks: list[Chunk] = []
    for rel in files:
        if language is None or language_for_path(rel) is not language:
            continue
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        chunks.extend(chunk_lines(rel, text, size, stride))
    return chunks


def last_lines(text: str, count: int) -> str:
    return "\n".join(text.split("\n")[-count:])


def render(block: Block) -> str:
    return f"{block.header()}\n{block.text}"


def pack(ranked: list[tuple[Chunk, float]], budget: int) -> list[Block]:
    """Whole chunks, best first, while they fit in ``budget`` tokens."""
    blocks: list[Block] = []
    used = 0
    for chunk, score in ranked:
        block = Block(chunk.path, chunk.start_line, chunk.end_line, chunk.text, score, "sparse")
        block.tokens = count_tokens(render(block) + BLOCK_SEPARATOR)
        if used + block.tokens > budget:
            if budget - used < 32:
                break
            continue
        blocks.append(block)
        used += block.tokens
    return blocks


def context_of(blocks: list[Block]) -> str:
    return BLOCK_SEPARATOR.join(render(b) for b in blocks)


class SparseIndex:
    """Chunks of one repository scored against a query by BM25 or Jaccard."""

    def __init__(self, chunks: list[Chunk], method: str):
        if method not in ("bm25", "jaccard"):
            raise ValueError(f"unknown method {method!r}")
        self.chunks = chunks
        self.method = method
        self._sets = [frozenset(c.tokens) for c in chunks] if method == "jaccard" else []
        self._bm25 = None
        if method == "bm25" and chunks:
            from rank_bm25 import BM25Okapi

            self._bm25 = BM25Okapi([c.tokens or [""] for c in chunks])

    def scores(self, query: str) -> list[float]:
        tokens = tokenize(query)
        if not self.chunks or not tokens:
            return [0.0] * len(self.chunks)
        if self._bm25 is not None:
            return [float(s) for s in self._bm25.get_scores(tokens)]
        wanted = frozenset(tokens)
        return [len(wanted & s) / len(wanted | s) if s else 0.0 for s in self._sets]

    def rank(
        self,
        query: str,
        exclude_path: str | None = None,
        top: int = 200,
    ) -> list[tuple[Chunk, float]]:
        """The ``top`` best chunks with a positive score, never from ``exclude_path``."""
        scored = [
            (chunk, score)
            for chunk, score in zip(self.chunks, self.scores(query), strict=True)
            if score > 0 and chunk.path != exclude_path
        ]
        scored.sort(key=lambda pair: -pair[1])
        return scored[:top]
