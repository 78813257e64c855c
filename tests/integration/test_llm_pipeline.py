"""The LLM router inside a real retrieval: plans over real HTTP, fallbacks on bad answers."""

from __future__ import annotations

import json
import time

import pytest

from greprag import Retriever
from tests.conftest import check_invariants, cursor
from tests.stubs.openai_stub import OpenAIStub

GOOD_PLAN = {
    "queries": [
        {"pattern": r"class\s+DataLoader\b", "kind": "class", "regex": True, "lang": "python"},
        {"pattern": "def load_batch", "kind": "method", "fixed": True, "lang": "python"},
    ],
    "synonyms": {"loader": ["reader"]},
}


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture
def llm_env(stub, monkeypatch):
    monkeypatch.setenv("GREPRAG_API_BASE", stub.api_base)
    monkeypatch.setenv("GREPRAG_API_KEY", "sk-test")
    return stub


def _retrieve(repo, **settings):
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "data = self.loader.")
    retriever = Retriever(repo, router="llm", model="openai/stub-model", routes="grep", **settings)
    return at, retriever.retrieve(**at.kwargs())


def test_a_good_plan_is_used(py_repo, llm_env):
    llm_env.reply(json.dumps(GOOD_PLAN))
    at, res = _retrieve(py_repo)
    check_invariants(py_repo, res, at.file, 4096, at.line)
    assert res.router == "llm" and not res.fallbacks
    assert [q.pattern for q in res.queries] == [q["pattern"] for q in GOOD_PLAN["queries"]]
    assert any(b.path == "data/loader.py" and "def load_batch" in b.text for b in res.blocks)
    assert "self.loader." in json.dumps(llm_env.requests[-1])  # the local context was sent


@pytest.mark.parametrize(
    "hostile",
    [
        {"pattern": "DataLoader", "command": "rg --pre=sh DataLoader"},
        {"pattern": "--pre=/bin/sh", "kind": "other"},
        {"pattern": "DataLoader", "glob": "../../etc/passwd"},
    ],
)
def test_a_hostile_plan_is_refused_and_the_offline_router_answers(py_repo, llm_env, hostile):
    llm_env.reply(json.dumps({"queries": [hostile]}))
    at, res = _retrieve(py_repo)
    check_invariants(py_repo, res, at.file, 4096, at.line)
    assert res.router == "offline"
    assert any("llm router failed" in note for note in res.fallbacks), res.fallbacks
    assert any(b.path == "data/loader.py" for b in res.blocks)


def test_garbage_falls_back_with_the_reason(py_repo, llm_env):
    llm_env.reply("I would search for the loader, probably.")
    _, res = _retrieve(py_repo)
    assert res.router == "offline" and "llm router failed" in res.fallbacks[0]


def test_a_timeout_falls_back_within_the_limit(py_repo, llm_env):
    llm_env.reply(json.dumps(GOOD_PLAN), delay=5.0)
    _retrieve(py_repo, llm_timeout=1.0)  # the first call also pays litellm's import
    started = time.perf_counter()
    _, res = _retrieve(py_repo, llm_timeout=1.0)
    assert time.perf_counter() - started < 3.0
    assert res.router == "offline" and "timed out" in res.fallbacks[0]
