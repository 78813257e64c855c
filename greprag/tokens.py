"""Token counting with tiktoken, offline.

tiktoken downloads encodings at first use; litellm ships cl100k_base and o200k_base in
its package data. When the user has not set ``TIKTOKEN_CACHE_DIR`` we point it there,
without importing litellm (which is slow).
"""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from greprag.config import cache_root
from greprag.errors import ConfigError

DEFAULT_ENCODING = "cl100k_base"


def _litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def _ensure_offline_cache() -> None:
    if os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR"):
        return
    folder = _litellm_tokenizer_dir()
    if folder is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


def _ranks_cache(name: str) -> Path:
    return cache_root() / "tiktoken" / f"{name}.marshal"


def _load_fast(name: str):  # -> tiktoken.Encoding | None
    """The encoding rebuilt from our marshal cache (~3× faster than tiktoken's own load)."""
    import tiktoken

    try:
        data = marshal.loads(_ranks_cache(name).read_bytes())
        pat_str, ranks, special = data["pat_str"], data["ranks"], data["special"]
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        return None
    return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special)


def _store_fast(name: str, encoding) -> None:
    path = _ranks_cache(name)
    data = {
        "pat_str": encoding._pat_str,
        "ranks": encoding._mergeable_ranks,
        "special": encoding._special_tokens,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(marshal.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs speed


_LOAD_LOCK = threading.Lock()


def preload_encoding(name: str = DEFAULT_ENCODING) -> None:
    """Start loading ``name`` in the background (the CLI overlaps it with the search);
    a failure is left for the first real use to report."""

    def load() -> None:
        with contextlib.suppress(Exception):
            get_encoding(name)

    threading.Thread(target=load, daemon=True).start()


def get_encoding(name: str = DEFAULT_ENCODING):  # -> tiktoken.Encoding
    """The tiktoken encoding ``name``, loaded offline once; cached for fast cold starts."""
    with _LOAD_LOCK:
        return _get_encoding(name)


@lru_cache(maxsize=4)
def _get_encoding(name: str):  # -> tiktoken.Encoding
    encoding = _load_fast(name)
    if encoding is not None:
        return encoding
    _ensure_offline_cache()
    import tiktoken

    try:
        encoding = tiktoken.get_encoding(name)
    except Exception as exc:  # unknown name, or its file missing and no network
        raise ConfigError(f"token encoding {name!r} cannot be loaded: {exc}") from None
    _store_fast(name, encoding)
    return encoding


# per encoding, counts by text in insertion order (the oldest first); str keys and int
# values only, so the garbage collector never walks these dicts
_COUNTS: dict[str, dict[str, int]] = {}
_COUNTS_MAX_CHARS = 16_000_000  # the texts each encoding's cache keeps, oldest out first
_COUNTS_LOCK = threading.Lock()
_counted_chars: dict[str, int] = {}

# These encodings' pre-tokenizers never put a newline and the line after it in one piece
# when that line holds a non-space character and does not start with "/": a text's count
# is the sum of the counts of its pieces cut before such lines (checked on 160 million
# characters of code and docs, both encodings). Lines recur across blocks, their shortened
# forms and the final context, so each is counted once.
_BY_LINE = frozenset({"cl100k_base", "o200k_base"})


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in ``text``; special-token text such as ``<|endoftext|>`` counts as plain text.
    Counts are remembered, keyed by the text, or by its lines where the encoding allows
    (the oldest go first past ``_COUNTS_MAX_CHARS``): the same blocks and lines recur
    from one retrieval to the next."""
    return _count(text, encoding, None)


def _count(text: str, encoding: str, limit: int | None) -> int:
    """``count_tokens``; with a ``limit``, counting stops at the first line that takes the
    count past it (the count so far is then a lower bound above the limit)."""
    if not text:
        return 0
    pieces = _line_pieces(text) if encoding in _BY_LINE else [text]
    counts = _COUNTS.get(encoding)
    if counts is None:
        with _COUNTS_LOCK:
            counts = _COUNTS.setdefault(encoding, {})
    total = 0
    fresh: list[tuple[str, int]] = []
    encoder = None
    for piece in pieces:  # a dict lookup is atomic: only insertions take the lock
        count = counts.get(piece)
        if count is None:
            encoder = encoder or get_encoding(encoding)
            count = len(encoder.encode_ordinary(piece))
            fresh.append((piece, count))
        total += count
        if limit is not None and total > limit:
            break
    with _COUNTS_LOCK:
        chars = _counted_chars.get(encoding, 0)
        for piece, count in fresh:
            if piece not in counts and len(piece) * 8 <= _COUNTS_MAX_CHARS:
                counts[piece] = count
                chars += len(piece)
        while chars > _COUNTS_MAX_CHARS:
            oldest = next(iter(counts))
            del counts[oldest]
            chars -= len(oldest)
        _counted_chars[encoding] = chars
    return total


def count_ahead(lines: Sequence[str], encoding: str = DEFAULT_ENCODING) -> bool:
    """Count a file's lines (a slice of them that starts where a piece does, its
    ``_line_pieces``) before a retrieval asks; False, counting nothing, once the counts
    kept hold half of ``_COUNTS_MAX_CHARS`` or the encoding counts whole texts only."""
    if encoding not in _BY_LINE or _counted_chars.get(encoding, 0) >= _COUNTS_MAX_CHARS // 2:
        return False
    if lines:
        _count("\n".join(lines) + "\n", encoding, None)  # the file's own pieces, each with its "\n"
    return True


def piece_starts(lines: Sequence[str], every: int) -> list[int]:
    """Indexes into ``lines`` where a piece starts, about ``every`` lines apart (0 first):
    slices cut there count as the same pieces as the whole file."""
    starts = [0]
    n = every
    while n < len(lines):
        if _opens_piece(lines[n]):
            starts.append(n)
            n += every
        else:
            n += 1
    return starts


def _opens_piece(line: str) -> bool:
    """No pre-tokenizer piece runs from the newline above into ``line``: it holds a
    non-space character and does not start with "/"."""
    return bool(line) and not line.isspace() and line[0] != "/"


def _line_pieces(text: str) -> list[str]:
    """``text`` cut before each line that holds a non-space character and does not start
    with "/" (blank lines stay with the line above); the pieces join back to ``text``."""
    lines = text.split("\n")
    pieces: list[str] = []
    current = lines[0]
    for line in lines[1:]:
        if _opens_piece(line):
            pieces.append(current + "\n")
            current = line
        else:
            current += "\n" + line
    pieces.append(current)
    return pieces


# A text longer than this many characters per token of the limit is first counted on a
# prefix (code runs 3-5 characters per token): most such blocks are far over the limit.
_PREFIX_CHARS_PER_TOKEN = 6


def count_tokens_upto(text: str, limit: int, encoding: str = DEFAULT_ENCODING) -> int:
    """``count_tokens(text)`` when that is at most ``limit``; otherwise some count above
    ``limit`` (a lower bound), found without encoding all of a long text.

    A long text is first counted on a prefix, cut where no pre-tokenizer piece spans the
    cut: just after a newline followed by a line that holds a non-space character and
    does not start with ``/`` (and, unless the encoding counts by line, ends a non-blank
    line: any tiktoken encoding, or only a whitespace piece keeping one token there), so
    the prefix never has more tokens than the whole text. Counting by line stops at the
    line that passes the limit.
    """
    start = _PREFIX_CHARS_PER_TOKEN * (limit + 1)
    if len(text) > 2 * start:
        cut = _safe_cut(text, start, by_line=encoding in _BY_LINE)
        if cut is not None:
            counted = _count(text[:cut], encoding, limit)
            if counted > limit:
                return counted
    return _count(text, encoding, limit)


def _safe_cut(text: str, start: int, *, by_line: bool) -> int | None:
    """The first position at or after ``start`` just past a newline such that the line
    after it holds a non-space character and does not start with ``/``, and (unless
    ``by_line``) the line before it ends in a non-space character; None when none is."""
    at = text.find("\n", start - 1)
    while 0 < at < len(text) - 1:
        after = text.find("\n", at + 1)
        line = text[at + 1 : after if after >= 0 else len(text)]
        if (by_line or not text[at - 1].isspace()) and _opens_piece(line):
            return at + 1
        at = after
    return None
