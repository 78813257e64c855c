"""Widening with tree-sitter on the units around a hit equals widening with the whole file.

Where the local scan is unsure (a hit in a docstring or comment), the widener parses
only the top-level units around the hit, one more on each side (``LocalExpander.region``
and ``expand_in_region``), not the whole module. On real code (pinned sdist, see
conftest) every non-blank line of every file is widened both ways: the two must agree
(units that do not parse alone are left to a whole-file parse: few may).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from greprag.syntax import expand_range
from greprag.syntax.analysis import expand_in_region
from greprag.syntax.scan import LocalExpander
from tests.comparison.conftest import fetch, parsed_files
from tests.comparison.test_scan_vs_treesitter import PYTHON

pytestmark = pytest.mark.comparison


def test_region_widening_equals_whole_file_widening(cache: Path) -> None:
    root = fetch(PYTHON, cache)
    scan = LocalExpander()
    compared = refused = 0
    for path, lines, text, spans in parsed_files(PYTHON, root):
        for number, line in enumerate(lines, 1):
            region = scan.region(lines, "python", number, number) if line.strip() else None
            if region is None:
                continue
            mine = expand_in_region(lines, "python", *region, number, number)
            if mine is None:  # the units did not parse alone: the widener parses the file
                refused += 1
                continue
            assert mine == expand_range(text, "python", number, number, spans), (path, number)
            compared += 1
    assert compared >= 1000 and refused <= compared // 50, (compared, refused)
