"""The CLI as a real subprocess: JSON output, --explain, and one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from greprag.models import Result
from greprag.tokens import count_tokens
from tests.conftest import Cursor, cursor, line_of

RESULT_KEYS = set(Result([], "", 0, [], {}, "offline").to_dict())


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GREPRAG_")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.update(extra)
    return env


def greprag(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "greprag", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or _env(),
        check=False,
    )


def _args(repo: Path, at: Cursor) -> list[str]:
    cursor_args = ["--file", at.file, "--line", str(at.line), "--column", str(at.column)]
    return ["--repo", str(repo), *cursor_args]


def _loader_args(repo: Path) -> list[str]:
    return _args(repo, cursor(repo, "pipeline/processor.py", "load_batch", "self.loader."))


def test_retrieve_json_has_the_result_shape(py_repo):
    proc = greprag("retrieve", *_loader_args(py_repo), "--budget", "800", "--json")

    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == RESULT_KEYS
    assert data["router"] == "offline"
    assert data["tokens"] == count_tokens(data["context"]) <= 800
    assert any(block["path"] == "data/loader.py" for block in data["blocks"])
    written = line_of(py_repo, "pipeline/processor.py", "return data")  # process_batch's end
    own = [b for b in data["blocks"] if b["path"] == "pipeline/processor.py"]
    assert all(block["start_line"] > written for block in own)
    assert data["queries"] and "total" in data["timings_ms"]


def test_retrieve_prints_the_context(py_repo):
    proc = greprag("retrieve", *_loader_args(py_repo))

    assert proc.returncode == 0, proc.stderr
    assert "class DataLoader" in proc.stdout
    assert "data/loader.py:" in proc.stdout


def test_queries_prints_the_plan_only(py_repo):
    proc = greprag("queries", *_loader_args(py_repo), "--json")

    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    queries = plan["queries"]
    assert 1 <= len(queries) <= 10
    assert "DataLoader" in {q["identifier"] for q in queries}
    assert "context" not in plan and "blocks" not in plan


def test_explain_shows_queries_hits_and_drops(java_repo):
    handler = "src/main/java/com/shop/orders/OrderHandler.java"
    at = cursor(java_repo, handler, "OrderStatus status = ", "status = ")
    args = [*_args(java_repo, at), "--budget", "300"]
    result = json.loads(greprag("retrieve", *args, "--json").stdout)
    proc = greprag("retrieve", *args, "--explain")

    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout + proc.stderr
    for query in result["queries"]:
        assert query["pattern"] in shown, f"query {query['pattern']!r} not explained"
    assert result["dropped"], "budget 300 should drop something"
    assert "drop" in shown.lower()
    for drop in result["dropped"]:
        assert drop["path"] in shown
    below = re.search(r"current file shown: lines (\d+)-(\d+)", shown)
    assert below and at.line < int(below[1]) <= int(below[2]), "the code below the method"


def _error_cases(repo: Path, tmp: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    outside = repo.parent / "outside.py"
    outside.write_text("x = 1\n")
    base = ["retrieve", "--repo", str(repo)]
    return {
        "missing repo": (
            ["retrieve", "--repo", str(tmp / "nope"), "--file", "a.py", "--line", "1"],
            _env(),
        ),
        "file outside (relative)": ([*base, "--file", "../outside.py", "--line", "1"], _env()),
        "file outside (absolute)": ([*base, "--file", str(outside), "--line", "1"], _env()),
        "missing file": ([*base, "--file", "pipeline/nope.py", "--line", "1"], _env()),
        "directory as file": ([*base, "--file", "pipeline", "--line", "1"], _env()),
        "line past the end": ([*base, "--file", "jobs/runner.py", "--line", "9999"], _env()),
        "rg missing": (
            [*base, "--file", "jobs/runner.py", "--line", "14", "--column", "11"],
            _env(GREPRAG_RG=str(tmp / "no-such-rg")),
        ),
        "queries line past the end": (
            ["queries", "--repo", str(repo), "--file", "jobs/runner.py", "--line", "9999"],
            _env(),
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "missing repo",
        "file outside (relative)",
        "file outside (absolute)",
        "missing file",
        "directory as file",
        "line past the end",
        "rg missing",
        "queries line past the end",
    ],
)
def test_errors_are_one_line_without_traceback(py_repo, tmp_path, case):
    args, env = _error_cases(py_repo, tmp_path)[case]
    proc = greprag(*args, env=env)

    assert proc.returncode != 0, f"{case}: exit 0, stdout={proc.stdout[:200]!r}"
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"{case}: stderr={proc.stderr!r}"
