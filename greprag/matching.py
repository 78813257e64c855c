"""Which query matched a line: rg patterns re-checked in Python, within a time budget.

rg runs all of a plan's patterns at once (finite automata: linear time whatever the
pattern). Attributing each matched line back to its queries happens in Python, where a
backtracking engine would take exponential time on a pattern such as ``(x+x+)+y``: a
model may propose one. So patterns are matched with the ``regex`` module, each search
under ``SEARCH_BUDGET_S`` and each pattern under ``PATTERN_BUDGET_S`` in all; a pattern
that runs out is switched off for the rest of the search, and says so.

Patterns GrepRAG builds itself from its fixed templates (identifiers escaped: linear on
the bounded lines rg returns) are ``trusted``: they use the standard ``re`` engine,
which compiles three times faster and needs no budget. Compiled patterns are cached.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "PATTERN_BUDGET_S",
    "SEARCH_BUDGET_S",
    "LineMatcher",
    "NamesMatcher",
    "as_rg_reads",
    "top_level_branches",
]

SEARCH_BUDGET_S = 0.02  # one line (at most max_line_chars long) against one pattern
PATTERN_BUDGET_S = 0.25  # one pattern over all the lines of one search


@dataclass
class LineMatcher:
    """One pattern, compiled for Python-side matching; ``exhausted`` once over budget."""

    pattern: Any  # regex.Pattern, or re.Pattern when trusted
    budgeted: bool = True
    spent_s: float = 0.0
    exhausted: bool = False

    @classmethod
    def compile(
        cls, pattern: str, *, fixed: bool = False, trusted: bool = False
    ) -> LineMatcher | None:
        """The matcher for an rg pattern, with the word classes rg uses for it (ASCII, or
        Unicode for non-ASCII patterns); None when Python cannot read a pattern rg can.
        ``trusted``: built from GrepRAG's own templates (no time budget needed)."""
        compiled = (_trusted if trusted else _budgeted)(pattern, fixed)
        return None if compiled is None else cls(compiled, budgeted=not trusted)

    def search(self, text: str) -> bool:
        """Whether ``text`` matches; False (and ``exhausted``) once the budget is spent."""
        if not self.budgeted:
            return self.pattern.search(text) is not None
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
def _budgeted(pattern: str, fixed: bool) -> Any:  # regex.Pattern | None
    import regex  # ~15 ms, and tiktoken's dependency anyway

    try:
        text = regex.escape(pattern) if fixed else pattern
        return regex.compile(text, regex.ASCII if text.isascii() else regex.UNICODE)
    except (regex.error, OverflowError, RecursionError, ValueError):
        return None


@lru_cache(maxsize=1024)
def _trusted(pattern: str, fixed: bool) -> re.Pattern[str] | None:
    try:
        text = re.escape(pattern) if fixed else pattern
        return re.compile(text, re.ASCII if text.isascii() else 0)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None


_NAME = re.compile(r"\w+", re.ASCII)
_SLOT = "\0"  # where the group of names stood


@dataclass
class NamesMatcher:
    """A template pattern with a group of names, ``(A|B|C)``, matched as the template
    with any identifier there, then that identifier looked up in ``names``: the generic
    branches compile once per template, not once per set of names (a large alternation
    costs ``re`` up to 1.4 ms to compile)."""

    branches: tuple[re.Pattern[str], ...]
    names: frozenset[str]
    exhausted: bool = False  # a template: linear, never over a budget

    @classmethod
    def compile(cls, pattern: str, names: list[str]) -> NamesMatcher | None:
        """The matcher of ``pattern`` with ``names`` as its group; None when the pattern
        is no such template (then a ``LineMatcher`` reads it as it is)."""
        if not names or not all(_NAME.fullmatch(n) and n.isascii() for n in names):
            return None  # ``\w+`` must stop where the names' ``\b`` would
        group = "(" + "|".join(names) + ")"
        if group not in pattern or _SLOT in pattern:
            return None
        branches = top_level_branches(pattern.replace(group, _SLOT))
        if branches is None or any(b.count(_SLOT) != 1 for b in branches):
            return None
        compiled = [_generic(b) for b in branches]
        if any(c is None for c in compiled):
            return None
        return cls(tuple(compiled), frozenset(names))

    def search(self, text: str) -> bool:
        names = self.names
        return any(
            found.group("name") in names
            for branch in self.branches
            for found in branch.finditer(text)
        )


@lru_cache(maxsize=256)
def _generic(branch: str) -> re.Pattern[str] | None:
    text = branch.replace(_SLOT, "(?P<name>\\w+)")
    try:
        return re.compile(text, re.ASCII if text.isascii() else 0)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None


def top_level_branches(pattern: str) -> list[str] | None:
    """``pattern`` cut at its top-level ``|``; None when its brackets do not balance."""
    branches: list[str] = []
    depth, start, index, in_class = 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "^":
                index += 1
            if pattern[index + 1 : index + 2] == "]":
                index += 1  # ``[]...]`` or ``[^]...]``: a literal ``]`` first
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
        index += 1
    if depth or in_class:
        return None
    return [*branches, pattern[start:]]


# rg's Unicode ``\s`` (``(?u:\s)``, which ``rg.prefilter_friendly`` writes for ``\s*``): the
# White_Space property. Python's own Unicode ``\s`` also takes U+001C..U+001F.
_RG_UNICODE_SPACE = "[\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"


@lru_cache(maxsize=1024)
def as_rg_reads(rg_pattern: str) -> re.Pattern[str] | None:
    """An ASCII pattern as rg runs it (``--no-unicode``: ASCII classes, but its
    ``(?u:\\s)``), for Python's ``re``; None when ``re`` cannot read it. Only for GrepRAG's
    own templates, which ``re`` reads as rg does and matches in linear time."""
    if not rg_pattern.isascii():
        return None
    try:
        return re.compile(rg_pattern.replace("(?u:\\s)", _RG_UNICODE_SPACE), re.ASCII)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
