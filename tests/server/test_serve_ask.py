"""``/ask`` and the MCP ``ask`` tool over real HTTP: the server's model (a local
OpenAI-compatible stub) answers from the passages the search found, citations checked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from tests.server.serving import start_server
from tests.stubs.openai_stub import OpenAIStub

QUESTION = "how long to wait before the next retry attempt"
CITED = "tidewater/client.py:9-11"  # inside def backoff_delay, which the search finds


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture(scope="module")
def server(docs_repo: Path, stub: OpenAIStub, tmp_path_factory: pytest.TempPathFactory):
    model = {
        "GREPRAG_MODEL": "openai/stub-model",
        "GREPRAG_API_BASE": stub.api_base,
        "GREPRAG_API_KEY": "sk-test",
    }
    running = start_server([docs_repo], tmp_path_factory.mktemp("cache"), env=model)
    yield running
    running.stop()


def test_ask_answers_with_checked_citations_and_the_passages(server, stub):
    stub.reply(f"Wait backoff_delay(attempt) seconds [{CITED}] [docs/nowhere.md:1-2].")
    reply = server.post("/ask", {"question": QUESTION, "k": 5})
    assert reply.status == 200, reply.body
    body = reply.body
    assert body["answer"] == f"Wait backoff_delay(attempt) seconds [{CITED}] ."
    assert [c["label"] for c in body["citations"]] == [CITED]
    assert body["removed_citations"] == ["docs/nowhere.md:1-2"] and body["error"] is None
    assert ("tidewater/client.py", 9) in [(b["path"], b["start_line"]) for b in body["blocks"]]


def test_a_failing_model_still_returns_the_passages_with_the_error(server, stub):
    stub.reply("unused", status=500)
    reply = server.post("/ask", {"question": QUESTION})
    assert reply.status == 200 and reply.body["answer"] == ""
    assert "the model failed" in reply.body["error"] and reply.body["blocks"]


def test_the_mcp_ask_tool_answers_then_lists_the_passages(server, stub):
    from mcp import Client

    stub.reply(f"Use backoff_delay [{CITED}].")

    async def session():
        async with Client(f"{server.url}/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            return names, await client.call_tool("ask", {"question": QUESTION})

    names, answer = asyncio.run(session())
    assert {"ask", "search", "retrieve"} <= names and not answer.is_error
    text = answer.content[0].text
    assert text.startswith(f"Use backoff_delay [{CITED}].")
    assert "# tidewater/client.py:9-" in text
    assert answer.structured_content["citations"][0]["label"] == CITED
