"""Budget packing: definitions first, later ones compact, similar code within its share."""

from __future__ import annotations

from greprag.fusion.dedup import MergedRange
from greprag.fusion.pack import pack

FUNC = [
    "def load(path, mode):",
    '    """Read every row of ``path``."""',
    *[f"    row_{i} = read_line(path, mode, {i})" for i in range(12)],
    "    return rows",
]
FILES = {f"f{i}.py": FUNC for i in range(6)}


def _range(path: str, route: str = "grep", score: float = 1.0) -> MergedRange:
    return MergedRange(path, 1, len(FUNC), score, route, match_lines={1})


def test_blocks_past_the_first_share_go_in_compact_and_similar_code_stays_whole():
    ranges = [_range("f0.py"), _range("f1.py"), _range("f2.py", "similar"), _range("f3.py")]
    whole = pack(ranges, FILES.__getitem__, budget=4000)
    tokens = whole.blocks[0].tokens
    packed = pack(ranges, FILES.__getitem__, budget=4000, compact_after=tokens, compact_tokens=40)
    forms = [(b.path, b.outline) for b in packed.blocks]
    assert forms == [("f0.py", False), ("f1.py", True), ("f2.py", False), ("f3.py", True)]
    assert all(b.tokens <= 40 for b in packed.blocks if b.outline)
    assert packed.blocks[1].text.startswith("def load(path, mode):")  # the signature stays


def test_similar_code_past_its_share_waits_for_the_rest():
    ranges = [_range("f0.py", "similar"), _range("f1.py", "similar"), _range("f2.py")]
    one = pack(ranges[:1], FILES.__getitem__, budget=4000).blocks[0].tokens
    packed = pack(ranges, FILES.__getitem__, budget=4000, similar_share=(one + 2) / 4000)
    assert [b.path for b in packed.blocks] == ["f0.py", "f2.py", "f1.py"]
    tight = pack(ranges, FILES.__getitem__, budget=2 * one + 4, similar_share=0.5)
    assert [b.path for b in tight.blocks] == ["f0.py", "f2.py"]
    assert any("similar code past its share" in d.reason for d in tight.dropped)
