"""Each metric on hand-made cases."""

from __future__ import annotations

import math

import pytest

from bench.facts import Location
from bench.metrics import (
    TaskResult,
    block_precision,
    covers,
    edit_similarity,
    exact_match,
    identifier_f1,
    identifier_recall,
    levenshtein,
    missing_identifiers,
    percentile,
    summarize,
    target_hit,
)
from bench.report import markdown
from greprag.models import Block

DEF = Location("pkg/mod.py", line=10, start_line=9, end_line=20)


def _block(path: str, start: int, end: int) -> Block:
    return Block(path, start, end, "text", 1.0)


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (_block("pkg/mod.py", 10, 10), True),  # exactly the header line
        (_block("pkg/mod.py", 1, 10), True),  # ends on the header
        (_block("pkg/mod.py", 11, 20), False),  # body without the header
        (_block("pkg/mod.py", 1, 9), False),  # decorator only
        (_block("pkg/other.py", 1, 100), False),  # another file
    ],
)
def test_covers_requires_the_header_line(block, expected):
    assert covers([block], DEF) is expected


def test_target_hit_accepts_any_alternative():
    overload = Location("A.java", 50, 50, 55)
    assert target_hit([_block("A.java", 48, 52)], (DEF, overload))
    assert not target_hit([_block("A.java", 1, 5)], (DEF, overload))
    assert not target_hit([], (DEF,))


def test_missing_identifiers_ignore_left_context_and_keywords():
    left = "from pkg import Console\nconsole = "
    missing = missing_identifiers("Console(width=80) if ready else None", left, "python")
    assert missing == {"width", "ready"}
    assert identifier_recall(missing, "def f(width): ...") == 0.5
    assert identifier_recall(set(), "anything") is None


def test_the_tail_of_a_number_is_no_identifier():
    """``73L``, ``0x19``, ``1e5`` and ``3.0f`` hold no name a context could carry."""
    truth = "long seed = 7522346378524621981L + 0x19 + 1e5 + 3.0f + k2;"
    assert missing_identifiers(truth, "", "java") == {"seed", "k2"}


def test_precision_counts_blocks_holding_any_needed_identifier():
    blocks = [
        Block("a.py", 1, 3, "def scale(width): ...", 1.0),
        Block("b.py", 1, 3, "def unrelated(): ...", 0.5),
        Block("c.py", 1, 3, "x = ready and other", 0.2),
        Block("d.py", 1, 3, "widths = 3  # not the same word", 0.1),
    ]
    assert block_precision(blocks, {"width", "ready"}) == 0.5
    assert block_precision([], {"width"}) is None
    assert block_precision(blocks, set()) is None


def test_percentile_interpolates():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert math.isnan(percentile([], 50))


def test_completion_metrics():
    assert exact_match("  foo(bar)\n", "foo(bar)")
    assert not exact_match("foo(baz)", "foo(bar)")
    assert levenshtein("kitten", "sitting") == 3
    assert edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert edit_similarity("", "") == 1.0
    assert identifier_f1("a.b(c)", "a.b(c)") == 1.0
    # predicted {x, y}, expected {x, z}: precision = recall = 1/2
    assert identifier_f1("x + y", "x + z") == pytest.approx(0.5)
    assert identifier_f1("1 + 2", "x") == 0.0


def _result(
    system: str,
    hit: bool,
    latency: float,
    member: bool | None = None,
    kind: str = "import",
    error: str | None = None,
) -> TaskResult:
    return TaskResult(
        "t",
        system,
        "python",
        "r",
        kind,
        hit,
        member,
        1.0 if hit else 0.0,
        100,
        latency,
        error=error,
    )


def test_summarize_aggregates_per_language_and_system():
    results = [
        _result("g", True, 10.0, member=True),
        _result("g", False, 20.0, member=False, kind="line"),
        _result("g", True, 30.0),
        _result("g", False, 0.0, error="boom"),
        _result("b", False, 5.0),
    ]
    rows = {r["system"]: r for r in summarize(results, {("python", "g"): 1.5})}
    g = rows["g"]
    assert (g["tasks"], g["errors"]) == (4, 1)
    assert g["gold_recall"] == 0.5
    assert g["member_recall"] == 0.5 and g["member_tasks"] == 2
    assert g["p50_ms"] == 20.0  # the failed task's latency is left out
    assert g["setup_s"] == 1.5
    assert g["gold_recall_by_kind"] == {"import": 2 / 3, "line": 0.0}
    assert rows["b"]["gold_recall"] == 0.0 and rows["b"]["setup_s"] == 0.0
    assert g["exact_match"] is None


def test_summarize_reports_recall_and_precision_per_kind_and_skips_absent_gold():
    body = _result("g", False, 5.0, kind="body")
    body.gold_hit, body.ident_recall, body.precision = None, 0.25, 0.5
    line = _result("g", True, 5.0, kind="line")
    line.precision = 1.0
    row = summarize([body, line], {})[0]
    assert row["gold_recall"] == 1.0  # the body task has no gold: left out
    assert row["gold_recall_by_kind"] == {"line": 1.0}
    assert row["ident_recall_by_kind"] == {"body": 0.25, "line": 1.0}
    assert row["precision_by_kind"] == {"body": 0.5, "line": 1.0}
    assert row["precision"] == 0.75
    table = markdown([row])
    assert "| identifier recall: body | identifier recall: line |" in table
    assert "| precision: body | precision: line |" in table
