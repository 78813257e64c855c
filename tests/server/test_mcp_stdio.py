"""``greprag mcp`` driven by the official SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from greprag.models import Block, Result
from tests.conftest import check_invariants, cursor, read_lines
from tests.server.serving import cli_env, served_copy


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return served_copy(tmp_path_factory.mktemp("mcp") / "py_pipeline")


def _session(repo: Path, cache: Path, steps):
    """Run ``steps(client)`` against ``greprag mcp --repo repo`` and return what it returns."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "greprag", "mcp", "--repo", str(repo)],
        env=cli_env(cache),
    )

    async def main():
        async with Client(params) as client:
            return await steps(client)

    return asyncio.run(main())


def test_tools_retrieve_read_and_refusals_over_stdio(repo, tmp_path):
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")

    async def steps(client):
        tools = (await client.list_tools()).tools
        answer = await client.call_tool("retrieve", at.kwargs())
        outside = await client.call_tool("retrieve", {"file": "../../etc/passwd", "line": 1})
        absolute = await client.call_tool("read", {"spec": "/etc/passwd:1-3"})
        past_end = await client.call_tool("retrieve", {**at.kwargs(), "line": 9999})
        read = await client.call_tool("read", {"spec": "data/loader.py:9-12"})
        status = await client.call_tool("status", {})
        return tools, answer, outside, absolute, past_end, read, status

    tools, answer, outside, absolute, past_end, read, status = _session(repo, tmp_path, steps)

    by_name = {tool.name: tool for tool in tools}
    assert {"retrieve", "read", "status"} <= set(by_name)
    assert "file" in by_name["retrieve"].input_schema["properties"]
    assert by_name["retrieve"].annotations.read_only_hint is True

    assert not answer.is_error
    text = answer.content[0].text
    listed = answer.structured_content["blocks"]
    assert any(b["path"] == "data/loader.py" for b in listed)
    blocks = []
    for meta in listed:  # each block's text is in the answer under its header, as in the file
        header = f"# {meta['path']}:{meta['start_line']}-{meta['end_line']}"
        assert header in text
        lines = read_lines(repo, meta["path"])[meta["start_line"] - 1 : meta["end_line"]]
        assert "\n".join(lines).strip() in text
        blocks.append(Block(**meta, text="\n".join(lines)))
    context = text.split("\n\n", 1)[1]
    result = Result(blocks, context, answer.structured_content["tokens"], [], {}, "offline")
    check_invariants(repo, result, at.file, 8000, at.line)

    for refused in (outside, absolute):
        assert refused.is_error
        (message,) = refused.content[0].text.splitlines()
        assert "outside" in message
    assert past_end.is_error and "past the end" in past_end.content[0].text

    assert not read.is_error
    assert "\n".join(read_lines(repo, "data/loader.py")[8:12]) in read.content[0].text
    assert "data/loader.py:9-12" in read.content[0].text
    assert str(repo.resolve()) in status.content[0].text


def test_a_budget_over_the_cap_is_capped_and_says_so(repo, tmp_path):
    at = cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.")

    async def steps(client):
        small = await client.call_tool("retrieve", {**at.kwargs(), "budget": 120})
        huge = await client.call_tool("retrieve", {**at.kwargs(), "budget": 10**6})
        return small, huge

    small, huge = _session(repo, tmp_path, steps)
    assert small.structured_content["tokens"] <= 120
    assert small.structured_content["dropped"], "a 120-token budget leaves blocks out"
    first = small.structured_content["dropped"][0]
    assert f"{first['path']}:{first['start_line']}-{first['end_line']}" in small.content[0].text
    assert "Left out:" in small.content[0].text
    assert "capped at 8000 tokens" in huge.content[0].text
