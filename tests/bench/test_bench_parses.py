"""The parse counter of ``bench.parses``: what it counts, and that it puts the parser back."""

from __future__ import annotations

import uuid

from bench.parses import counted_parses
from greprag.syntax import analysis, file_spans


def test_counted_parses_counts_a_whole_file_parse_and_restores_the_parser() -> None:
    original = analysis.tree_analysis
    text = f"# {uuid.uuid4()}\nclass A:\n    def f(self):\n        return 1\n"  # never cached
    with counted_parses() as counts:
        spans = file_spans("a.py", text, "python")
    assert [s.name for s in spans if s.kind == "class"] == ["A"]
    assert counts["whole file"] == 1 and counts["cpu"] > 0
    assert analysis.tree_analysis is original
