"""``greprag ask`` as a real process: search on real files with real rg, the answer from a
local OpenAI-compatible stub over real HTTP, citations checked, one line on failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stubs.openai_stub import OpenAIStub

QUESTION = "how long to wait before the next retry attempt"
CITED = "tidewater/client.py:9-11"  # inside def backoff_delay, which the search finds


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


def ask(repo: Path, *args: str, stub: OpenAIStub | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GREPRAG_")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", XDG_CONFIG_HOME=str(repo / "no-user-config"))
    if stub is not None:
        env.update(
            GREPRAG_MODEL="openai/stub-model", GREPRAG_API_BASE=stub.api_base, GREPRAG_API_KEY="sk"
        )
    return subprocess.run(
        [sys.executable, "-m", "greprag", "ask", QUESTION, "--repo", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_offline_ask_prints_the_passages_and_exits_0(docs_repo: Path):
    proc = ask(docs_repo)
    assert proc.returncode == 0, proc.stderr
    assert "def backoff_delay" in proc.stdout and "tidewater/client.py:9-" in proc.stdout
    assert "no LLM model configured" in proc.stderr and "Traceback" not in proc.stderr


def test_the_answer_streams_with_checked_citations_and_its_sources(docs_repo, stub):
    stub.reply(f"Wait backoff_delay(attempt) seconds [{CITED}]; see [secrets/keys.md:1-9].")
    proc = ask(docs_repo, stub=stub)
    assert proc.returncode == 0, proc.stderr
    answer, sources = proc.stdout.split("\n\nSources:\n")
    assert answer == f"Wait backoff_delay(attempt) seconds [{CITED}]; see ."
    assert sources.split() == [f"[{CITED}]"]
    assert "removed a citation of something not given: [secrets/keys.md:1-9]" in proc.stderr
    sent = stub.requests[0]["messages"][1]["content"]
    assert '<passage cite="tidewater/client.py:9-' in sent and "def backoff_delay" in sent


def test_json_carries_the_answer_citations_and_passages(docs_repo, stub):
    stub.reply(f"Use backoff_delay [{CITED}].")
    proc = ask(docs_repo, "--json", "--k", "5", stub=stub)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["answer"] == f"Use backoff_delay [{CITED}]."
    assert [c["label"] for c in payload["citations"]] == [CITED]
    assert 0 < len(payload["blocks"]) <= 5 and payload["error"] is None


def test_a_failing_model_is_one_line_exit_3_and_the_passages(docs_repo, stub):
    stub.reply("unused", status=500)
    proc = ask(docs_repo, stub=stub)
    assert proc.returncode == 3
    errors = [line for line in proc.stderr.splitlines() if line.startswith("greprag: error:")]
    assert len(errors) == 1 and "the model failed" in errors[0], proc.stderr
    assert "def backoff_delay" in proc.stdout and "Traceback" not in proc.stderr


def test_bad_kind_is_one_line_exit_2(docs_repo):
    proc = ask(docs_repo, "--kind", "pictures")
    assert proc.returncode == 2 and proc.stderr.startswith("greprag: error: --kind must be")
