"""The reliability cases: each test declares what it throws at GrepRAG and what must come
out, and docs/reliability.md is this registry rendered as tables.

    @case("rg per-file errors", "an unreadable file", "result; skip 'unreadable'")
    def test_...

    @cases("config bounds", [("nan", "budget = nan", "one line, exit 2", "budget = nan"), ...],
           "line")
    def test_...(line): ...

Run ``python -m tests.reliability.cases`` to rewrite docs/reliability.md after changing
cases; ``test_the_case_table_is_current`` fails while it is out of date.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["AREAS", "Case", "all_cases", "case", "cases", "render", "write"]

HERE = Path(__file__).parent
DOC = HERE.parents[1] / "docs" / "reliability.md"

# The fault classes of issue 11, in the order the document shows them.
AREAS = (
    "rg per-file errors",
    "regex and CPU bounds",
    "dense index",
    "one line model and text",
    "config bounds",
    "CLI conventions",
    "model output",
    "determinism",
    "properties",
)


@dataclass(frozen=True)
class Case:
    """One hostile or broken input and the outcome the test asserts."""

    area: str
    hostile: str
    outcome: str
    test: str  # module::function[id]


def case(area: str, hostile: str, outcome: str) -> Callable[[Callable], Callable]:
    """Declare a test as one case."""

    def mark(fn: Callable) -> Callable:
        _check_area(area)
        fn.reliability_cases = [Case(area, hostile, outcome, _test_id(fn))]
        return pytest.mark.reliability(fn)

    return mark


def cases(
    area: str, rows: Sequence[tuple[Any, ...]], argnames: str
) -> Callable[[Callable], Callable]:
    """Declare a parametrized test: each row is ``(id, hostile, outcome, *args)``."""

    def mark(fn: Callable) -> Callable:
        _check_area(area)
        fn.reliability_cases = [
            Case(area, hostile, outcome, f"{_test_id(fn)}[{ident}]")
            for ident, hostile, outcome, *_ in rows
        ]
        params = [pytest.param(*args, id=ident) for ident, _, _, *args in rows]
        return pytest.mark.reliability(pytest.mark.parametrize(argnames, params)(fn))

    return mark


def _check_area(area: str) -> None:
    if area not in AREAS:
        raise ValueError(f"unknown area {area!r}; add it to AREAS")


def _test_id(fn: Callable) -> str:
    return f"{fn.__module__.rsplit('.', 1)[-1]}::{fn.__name__}"


def all_cases() -> list[Case]:
    """Every declared case of ``tests/reliability/test_*.py``, by area, then in file and
    definition order."""
    found: list[Case] = []
    for path in sorted(HERE.glob("test_*.py")):
        module = importlib.import_module(f"tests.reliability.{path.stem}")
        for value in vars(module).values():
            found.extend(getattr(value, "reliability_cases", ()))
    return sorted(found, key=lambda c: AREAS.index(c.area))  # stable: files, then definitions


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(found: list[Case]) -> str:
    """docs/reliability.md for ``found``."""
    out = [
        "# Reliability: hostile and broken inputs, and what GrepRAG does with them",
        "",
        "Generated from the suite in `tests/reliability/` (`python -m tests.reliability.cases`",
        "rewrites it; a test fails while it is out of date). Every row is a test that throws",
        "the input at GrepRAG (the real CLI or API, real rg, real files, real faiss, an LLM",
        "over real HTTP to a local stub) and asserts the outcome: a result with the skip",
        "reported, or one line on stderr and a documented exit code; never a traceback, an",
        "escape from the repository, a hang past the test's bound, or lost work.",
        "",
        "Exit codes: 0 success; 1 `status` found no usable dense index; 2 bad input or usage;",
        "3 a requested feature is unavailable; 4 an I/O failure; 130 interrupted; 141 the",
        "reader closed the pipe (SIGPIPE).",
        "",
        f"{len(found)} cases:",
        "",
    ]
    counts = {area: sum(c.area == area for c in found) for area in AREAS}
    out += [f"- {area}: {counts[area]}" for area in AREAS]
    for area in AREAS:
        rows = [c for c in found if c.area == area]
        out += ["", f"## {area} ({len(rows)})", ""]
        out += ["| hostile or broken input | outcome (asserted) | test |", "| --- | --- | --- |"]
        out += [f"| {_cell(c.hostile)} | {_cell(c.outcome)} | `{c.test}` |" for c in rows]
    return "\n".join(out) + "\n"


def write() -> Path:
    """Rewrite docs/reliability.md from the registry."""
    DOC.write_text(render(all_cases()), encoding="utf-8")
    return DOC


if __name__ == "__main__":
    sys.stdout.write(f"wrote {write()}\n")
