"""``/search`` and the MCP ``search`` tool of a real ``greprag serve`` over a manual with
its code: whole sections (HTML ones with their anchor), the same as in-process, and the
CLI's ``greprag search`` forwarded to the server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from greprag import Retriever
from greprag.models import Result
from tests.server.serving import cli_env, served_copy, start_server

QUESTION = "how long to wait before the next retry attempt"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return served_copy(tmp_path_factory.mktemp("served") / "docs_manual", "docs_manual")


@pytest.fixture(scope="module")
def server(repo: Path, tmp_path_factory: pytest.TempPathFactory):
    running = start_server([repo], tmp_path_factory.mktemp("cache"))
    yield running
    running.stop()


def _spans(blocks) -> list[tuple[str, int, int, str | None]]:
    return [
        (b["path"], b["start_line"], b["end_line"], b["anchor"])
        if isinstance(b, dict)
        else (b.path, b.start_line, b.end_line, b.anchor)
        for b in blocks
    ]


def test_search_over_http_returns_the_sections_the_library_returns(server, repo):
    reply = server.post("/search", {"query": QUESTION, "k": 5})
    assert reply.status == 200, reply.body
    result = Result.from_dict(reply.body)
    local = Retriever(repo, routes="grep").search(QUESTION, k=5)
    assert _spans(reply.body["blocks"]) == _spans(local.blocks)
    found = {(b.path, b.start_line) for b in result.blocks}
    assert ("tidewater/client.py", 9) in found  # def backoff_delay, with its docstring
    assert any(b.path == "docs/api.rst" for b in result.blocks)
    html = server.post("/search", {"query": "proxy server for every request", "kind": "docs"})
    assert html.status == 200, html.body
    anchors = [b["anchor"] for b in html.body["blocks"] if b["path"] == "docs/html/config.html"]
    assert anchors and anchors[0] == "configuration"


def test_search_refuses_bad_input_with_one_line(server):
    for body in ({"query": " "}, {"query": "retry", "kind": "prose"}, {"k": 3}):
        reply = server.post("/search", body)
        assert reply.status == 400, (body, reply.body)
        assert "\n" not in reply.body["error"]


def test_the_mcp_search_tool_returns_sections(server):
    from mcp import Client

    async def session():
        async with Client(f"{server.url}/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            answer = await client.call_tool("search", {"query": QUESTION, "k": 5})
            docs = await client.call_tool(
                "search", {"query": "proxy server for every request", "kind": "docs"}
            )
            return names, answer, docs

    names, answer, docs = asyncio.run(session())
    assert "search" in names
    assert not answer.is_error and not docs.is_error
    text = answer.content[0].text
    assert "# tidewater/client.py:9-" in text and "# docs/api.rst:" in text
    assert "docs/html/config.html#configuration" in docs.content[0].text


def test_greprag_search_forwards_to_the_running_server(server, repo):
    misses = server.get("/status").body["roots"][0]["answers"]["misses"]
    argv = [sys.executable, "-m", "greprag", "search", "backoff delay between attempts"]
    proc = subprocess.run(
        [*argv, "--repo", str(repo), "--k", "3", "--json"],
        env=cli_env(server.cache),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert server.get("/status").body["roots"][0]["answers"]["misses"] == misses + 1
    forwarded = json.loads(proc.stdout)
    local = Retriever(repo, routes="grep").search("backoff delay between attempts", k=3)
    assert _spans(forwarded["blocks"]) == _spans(local.blocks)
