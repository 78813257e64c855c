"""The fast local scan against tree-sitter, on real third-party code fetched from PyPI.

Dedup widens a hit with the scan (``greprag.syntax.scan``) and asks tree-sitter only where
the scan returns None, so the blocks a retrieval shows are tree-sitter's only as often as
both agree. For every non-blank line of every file tree-sitter parses cleanly, this
widens the line both ways and pins two rates (measured, minus a small margin):

- agreement: the scan answers with exactly tree-sitter's block;
- precision: of the lines the scan answers, the share it gets right (a wrong answer
  changes what is retrieved; a None only costs a parse).

The sources are pinned sdists, downloaded once into ``~/.cache/greprag-tests``; the test
is skipped (saying why) only when the download fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from greprag.syntax import expand_range, file_spans
from greprag.syntax.grammars import grammar_key
from greprag.syntax.scan import LocalExpander
from greprag.syntax.treesitter import tree_analysis
from tests.comparison.conftest import Source, fetch

pytestmark = pytest.mark.comparison

MARGIN = 0.01


# click: a pure-Python library (with its tests and examples). JPype1: its sdist ships the
# Java half of the bridge and its test harness, in Allman style (``{`` on its own line).
PYTHON = Source("click", "8.1.7", "python", "**/*.py", agreement=0.989, precision=0.997)
JAVA = Source("JPype1", "1.5.2", "java", "**/*.java", agreement=0.900, precision=0.900)


@dataclass
class Rates:
    files: int = 0
    refused: int = 0  # files tree-sitter does not parse cleanly: no reference to compare with
    lines: int = 0
    answered: int = 0
    agreed: int = 0

    @property
    def agreement(self) -> float:
        return self.agreed / self.lines

    @property
    def precision(self) -> float:
        return self.agreed / self.answered

    def __str__(self) -> str:
        return (
            f"{self.files} files ({self.refused} not parsed cleanly, left out), "
            f"{self.lines} lines: scan answers {self.answered / self.lines:.1%}, "
            f"agreement {self.agreement:.1%}, precision {self.precision:.1%}"
        )


def compare(files: list[Path], lang: str) -> Rates:
    """Widen every non-blank line with the scan and with tree-sitter; count agreements."""
    rates = Rates()
    key = grammar_key(lang)
    assert key is not None
    for file in files:
        path = file.as_posix()
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)  # what the widener hands tree-sitter
        if tree_analysis(key, text.encode("utf-8", "replace")) is None:
            rates.refused += 1
            continue
        rates.files += 1
        spans = file_spans(path, text, lang)
        scan = LocalExpander()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            reference = expand_range(text, lang, number, number, spans)
            local = scan.expand(path, lines, lang, number, number)
            rates.lines += 1
            rates.answered += local is not None
            rates.agreed += local == reference
    return rates


@pytest.mark.parametrize("source", [PYTHON, JAVA], ids=lambda s: s.lang)
def test_the_local_scan_agrees_with_tree_sitter_on_real_code(
    source: Source, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fetch(source, cache)
    files = sorted(p for p in root.glob(source.pattern) if p.is_file())
    assert len(files) >= 20, f"{source.package} {source.version}: expected its sources"
    rates = compare(files, source.lang)
    with capsys.disabled():
        print(f"\n{source.package} {source.version} ({source.lang}): {rates}")
    assert rates.refused <= rates.files // 10, "tree-sitter should parse nearly every file"
    assert rates.agreement >= source.agreement - MARGIN, rates
    assert rates.precision >= source.precision - MARGIN, rates
