"""``token_floor`` never exceeds the real count, and ``count_tokens_upto`` keeps its
contract with it: exact up to the limit, some count above the limit past it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from greprag.tokens import count_tokens, count_tokens_upto, get_encoding, token_floor

ENCODINGS = ("cl100k_base", "o200k_base", "p50k_base", "r50k_base")
SAMPLES = [
    "def load(path: str) -> dict[str, int]:\n    return {k: 2**10 for k in path}\n",
    "it's, don't, we'll, they've, I'M, O'Reilly's 12345678 x1y2z3 __init__ fooBarBaz",
    "café naïve résumé e\u0301a Ⅻ ² 数据 données — “quotes” <|endoftext|>",
    "    \n\n\t\t}\n);\n  // ok\n\n\n",
    "",
]


def _loadable(name: str) -> bool:
    try:
        get_encoding(name)
    except Exception:
        return False
    return True


def _texts() -> list[str]:
    """The samples, this repository's own source files, and random mixtures of them."""
    root = Path(__file__).resolve().parents[2] / "greprag"
    files = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))[:40]]
    rng = random.Random(0)
    alphabet = "abcXYZ019_'’é\u0301 \t\n(){}.,:;\"<>|=-+*/\\数²"
    mixed = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300))) for _ in range(200)]
    return SAMPLES + files + mixed


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if _loadable(e)])
def test_the_floor_never_exceeds_the_count(encoding: str) -> None:
    texts = _texts()
    for text in texts:
        assert token_floor(text) <= count_tokens(text, encoding), (encoding, text[:80])
    assert sum(token_floor(t) for t in texts) > 0.3 * sum(count_tokens(t, encoding) for t in texts)


def test_count_upto_is_exact_within_the_limit_and_over_it_past() -> None:
    for text in _texts():
        exact = count_tokens(text)
        for limit in (0, 5, exact - 1, exact, exact + 1, 3 * exact):
            if limit < 0:
                continue
            got = count_tokens_upto(text, limit)
            assert got == exact if exact <= limit else got > limit, (limit, exact, got)
