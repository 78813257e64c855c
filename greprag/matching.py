"""Which query matched a line: rg patterns re-checked in Python, within a time budget.

rg runs all of a plan's patterns at once (finite automata: linear time whatever the
pattern). Attributing each matched line back to its queries happens in Python, where a
backtracking engine would take exponential time on a pattern such as ``(x+x+)+y``: a
model may propose one. So patterns are matched with the ``regex`` module, each search
under ``SEARCH_BUDGET_S`` and each pattern under ``PATTERN_BUDGET_S`` in all; a pattern
that runs out is switched off for the rest of the search, and says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["PATTERN_BUDGET_S", "SEARCH_BUDGET_S", "LineMatcher"]

SEARCH_BUDGET_S = 0.02  # one line (at most max_line_chars long) against one pattern
PATTERN_BUDGET_S = 0.25  # one pattern over all the lines of one search


@dataclass
class LineMatcher:
    """One pattern, compiled for Python-side matching; ``exhausted`` once over budget."""

    pattern: Any  # regex.Pattern
    spent_s: float = 0.0
    exhausted: bool = False

    @classmethod
    def compile(cls, pattern: str, *, fixed: bool = False) -> LineMatcher | None:
        """The matcher for an rg pattern, with the word classes rg uses for it (ASCII, or
        Unicode for non-ASCII patterns); None when Python cannot read a pattern rg can."""
        compiled = _compiled(pattern, fixed)
        return None if compiled is None else cls(compiled)

    def search(self, text: str) -> bool:
        """Whether ``text`` matches; False (and ``exhausted``) once the budget is spent."""
        if self.exhausted:
            return False
        started = time.perf_counter()
        try:
            found = self.pattern.search(text, timeout=SEARCH_BUDGET_S) is not None
        except TimeoutError:
            found = False
            self.exhausted = True
        self.spent_s += time.perf_counter() - started
        if self.spent_s > PATTERN_BUDGET_S:
            self.exhausted = True
        return found


@lru_cache(maxsize=1024)
def _compiled(pattern: str, fixed: bool) -> Any:  # regex.Pattern | None
    """A pattern compiled once per process (a plan's probes recur from cursor to cursor,
    and compiling one costs more than matching it against a few hundred lines)."""
    import regex  # ~15 ms, and tiktoken's dependency anyway

    try:
        text = regex.escape(pattern) if fixed else pattern
        return regex.compile(text, regex.ASCII if text.isascii() else regex.UNICODE)
    except (regex.error, OverflowError, RecursionError, ValueError):
        return None
