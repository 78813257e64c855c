"""docs/reliability.md is the case registry rendered: it fails while the two disagree."""

from __future__ import annotations

from tests.reliability.cases import AREAS, DOC, all_cases, render

MIN_CASES = 60


def test_the_case_table_is_current():
    found = all_cases()
    assert DOC.read_text(encoding="utf-8") == render(found), (
        "docs/reliability.md is out of date: run `python -m tests.reliability.cases`"
    )


def test_every_fault_class_has_cases():
    found = all_cases()
    assert len(found) >= MIN_CASES
    assert all(any(c.area == area for c in found) for area in AREAS)
    assert len({c.test for c in found}) == len(found), "two cases share a test id"
