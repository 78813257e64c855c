"""The LLM question router over real HTTP to a local stub: the model only adds terms,
which weigh as synonyms; a hostile or broken answer never changes the user's plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mode.llm_router import MAX_MODEL_TERMS, LLMQuestionRouter, parse_terms
from docs_mode.profile import load_profile
from docs_mode.router import OfflineQuestionRouter
from greprag import Retriever
from greprag.config import Settings
from tests.stubs.openai_stub import OpenAIStub

QUESTION = "why does Session.send ignore the retry policy"
OFFLINE = OfflineQuestionRouter(load_profile())


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


def router(stub: OpenAIStub, reply: str) -> LLMQuestionRouter:
    stub.reply(reply)
    settings = Settings(
        router="llm", model="openai/stub-model", api_base=stub.api_base, api_key="sk-test"
    )
    return LLMQuestionRouter(OFFLINE, settings)


def test_the_models_terms_join_below_the_users_own_words(stub):
    reply = {
        "keywords": ["backoff", "RetryBudget", "RetryPolicy", "retry"],
        "synonyms": {"ignore": ["skip"]},
    }
    plan = router(stub, json.dumps(reply)).plan(QUESTION)
    by_text = {q.identifier: q for q in plan.queries}
    assert plan.router == "llm" and not plan.fallbacks
    offline = {q.identifier: q.weight for q in OFFLINE.plan(QUESTION).queries}
    assert {t: by_text[t].weight for t in offline} == offline  # the user's terms unchanged
    added = {"backoff", "RetryBudget", "skip"}
    assert added <= set(by_text) and "retry" in offline  # "retry" was already the user's
    assert "RetryPolicy" not in by_text  # the user's "retry policy", joined, finds it
    assert all(by_text[t].purpose == "synonym" for t in added)
    own = [q.weight for q in OFFLINE.plan(QUESTION).queries if q.purpose != "synonym"]
    assert max(by_text[t].weight for t in added) < min(own) < by_text["Session.send"].weight
    assert "skip" in plan.synonyms["ignore"]
    sent = stub.requests[0]["messages"][1]["content"]
    assert QUESTION in sent


def test_hostile_terms_stay_data_and_are_bounded(stub):
    reply = {
        "keywords": ["--pre=sh", "$(rm -rf ~)", "a" * 200, ".*", "x|y", "ok word"]
        + [f"term{i}" for i in range(20)],
        "synonyms": {"retry": ["`reboot`", 3, None], "x": "not a list"},
    }
    plan = router(stub, json.dumps(reply)).plan(QUESTION)
    texts = {q.identifier for q in plan.queries}
    assert not texts & {"--pre=sh", "$(rm -rf ~)", ".*", "x|y", "a" * 200, "`reboot`"}
    assert "ok word" in texts
    added = [q for q in plan.queries if q.identifier not in {"ok word"} and "term" in q.identifier]
    assert len(added) <= MAX_MODEL_TERMS - 1
    assert all(not q.pattern.startswith("-") for q in plan.queries)


@pytest.mark.parametrize("reply", ["no json at all", "[1, 2]", '{"keywords": "x"'])
def test_a_broken_answer_falls_back_to_the_offline_plan(stub, reply):
    plan = router(stub, reply).plan(QUESTION)
    assert [q.pattern for q in plan.queries] == [q.pattern for q in OFFLINE.plan(QUESTION).queries]
    assert plan.router == "offline" and any("offline plan used" in f for f in plan.fallbacks)


def test_parse_terms_keeps_only_well_formed_strings():
    keywords, synonyms = parse_terms(
        '```json\n{"keywords": ["a b", 1], "synonyms": {"db": ["database"]}}\n```'
    )
    assert keywords == ["a b"] and synonyms == {"db": ["database"]}


def test_search_with_router_llm_uses_the_model_and_finds_through_its_term(stub, docs_repo: Path):
    stub.reply(json.dumps({"keywords": ["backoff_delay"], "synonyms": {}}))
    retriever = Retriever(
        docs_repo,
        routes="grep",
        router="llm",
        model="openai/stub-model",
        api_base=stub.api_base,
        api_key="sk-test",
    )
    question = "what is the pause length"  # offline, nothing in the repo matches
    assert not Retriever(docs_repo, routes="grep").search(question).blocks
    result = retriever.search(question, k=10)
    assert result.router == "llm" and stub.requests
    assert "backoff_delay" in [q.identifier for q in result.queries]
    assert ("tidewater/client.py", 9) in [(b.path, b.start_line) for b in result.blocks]
