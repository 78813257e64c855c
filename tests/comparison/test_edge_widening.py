"""Ranges that start or end on a blank or comment line: the scan against tree-sitter.

Merged hits and similar-code regions often begin or end on a blank line or a comment at
module or class level, which the scan cannot place by itself. The scan then widens around
the range's first and last code lines and keeps the range's own lines
(``LocalExpander.expand``) instead of asking tree-sitter. On real code (pinned sdist, see
conftest), every range of up to six lines with such an edge is widened both ways and
balanced to whole units (as the widener does). They agree on 92% (click 8.1.7); most of
the rest are a blank line just below a method or a class, which makes tree-sitter take the
unit around it whole (the class of the method), where the scan keeps the unit the range's
code is in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from greprag.syntax import expand_range
from greprag.syntax.scan import LocalExpander
from tests.comparison.conftest import fetch, parsed_files
from tests.comparison.test_scan_vs_treesitter import PYTHON

pytestmark = pytest.mark.comparison

SPAN = 5  # lines from the edge to the other end of the range


def _balanced(
    scan: LocalExpander, path: str, lines: list[str], found: tuple[int, int]
) -> tuple[int, int]:
    return scan.balance(path, lines, "python", *found) or found


def test_edge_ranges_widen_as_tree_sitter_does(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fetch(PYTHON, cache)
    scan = LocalExpander()
    answered = agreed = 0
    for path, lines, text, spans in parsed_files(PYTHON, root):
        for edge, line in enumerate(lines, 1):
            if line.strip() and not line.lstrip().startswith("#"):
                continue
            for lo, hi in ((edge - SPAN, edge), (edge, edge + SPAN)):
                if lo < 1 or hi > len(lines):
                    continue
                mine = scan.expand(path, lines, "python", lo, hi)
                if mine is None:
                    continue
                reference = expand_range(text, "python", lo, hi, spans)
                answered += 1
                agreed += _balanced(scan, path, lines, mine) == _balanced(
                    scan, path, lines, reference
                )
    with capsys.disabled():
        print(f"\nclick: {answered} ranges with a blank or comment edge, {agreed} agree")
    assert answered >= 1000, answered
    assert agreed >= 0.91 * answered, (agreed, answered)
