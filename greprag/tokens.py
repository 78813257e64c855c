"""Token counting with tiktoken, offline.

tiktoken downloads encodings at first use; litellm ships cl100k_base and o200k_base in
its package data. When the user has not set ``TIKTOKEN_CACHE_DIR`` we point it there,
without importing litellm (which is slow).
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path

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


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING):  # -> tiktoken.Encoding
    """The tiktoken encoding ``name``, loaded from the offline cache when possible."""
    _ensure_offline_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in ``text``; special-token text such as ``<|endoftext|>`` counts as plain text."""
    if not text:
        return 0
    return len(get_encoding(encoding).encode(text, disallowed_special=()))
