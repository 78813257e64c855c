"""The interleaved comparison's table: medians over rounds, ratios per round."""

from __future__ import annotations

from bench.latency_ab import summary


def _row(
    p50: float, floor: float, p95: float, cpu: float, thread: float | None = None
) -> dict[str, object]:
    row: dict[str, object] = {"p50": p50, "floor_p50": floor, "p95": p95, "cpu": cpu}
    if thread is not None:
        row["thread_cpu"] = thread
    return {**row, "lines": 1234}


def test_summary_takes_medians_over_rounds_and_ratios_per_round() -> None:
    rows = {
        ("django", "before"): [_row(100, 20, 150, 120), _row(140, 40, 200, 160)],
        ("django", "after"): [_row(60, 20, 120, 80, 41.0), _row(90, 30, 150, 100, 45.0)],
    }
    table = summary(rows, ["django"])
    assert table[0].startswith("| corpus |") and len(table) == 3
    cells = [c.strip() for c in table[2].strip("|").split("|")]
    assert cells[:5] == ["django", "1,234", "25.0 ms", "120.0 ms", "75.0 ms"]
    # ratios are taken per round, then the median: (5.0 + 3.5) / 2 and (3.0 + 3.0) / 2
    # p95/p50 per round, then the median: (1.5 + 1.43) / 2 → (2.0 + 1.67) / 2
    assert cells[5:8] == ["4.25×", "3.00×", "1.46 → 1.83"]
    assert cells[8] == "140 → 90 ms"
    # the thread's CPU: "–" for a tree whose bench.latency did not report it
    assert cells[9] == "– → 43.0 ms"
