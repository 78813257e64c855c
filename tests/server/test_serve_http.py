"""``greprag serve`` over real HTTP on 127.0.0.1: the JSON routes, the MCP endpoint, the
safety checks, following edits, and the CLI forwarding to it."""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("uvicorn")

from greprag import Retriever
from greprag.models import Result
from tests.conftest import check_invariants, cursor, read_lines
from tests.server.serving import cli_env, served_copy, start_server

RESULT_KEYS = set(Result([], "", 0, [], {}, "offline").to_dict())
TOKEN = "t0ken-for-the-tests-0123456789"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return served_copy(tmp_path_factory.mktemp("served") / "py_pipeline")


@pytest.fixture(scope="module")
def server(repo: Path, tmp_path_factory: pytest.TempPathFactory):
    running = start_server([repo], tmp_path_factory.mktemp("cache"))
    yield running
    running.stop()


def _loader_cursor(repo: Path) -> dict[str, object]:
    return cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "self.loader.").kwargs()


def test_retrieve_answers_the_cli_json_shape_with_the_in_process_blocks(server, repo):
    at = _loader_cursor(repo)
    reply = server.post("/retrieve", at)
    assert reply.status == 200, reply.body
    assert set(reply.body) >= RESULT_KEYS
    expected = Retriever(repo).retrieve(**at)
    got = [(b["path"], b["start_line"], b["end_line"]) for b in reply.body["blocks"]]
    assert got == [(b.path, b.start_line, b.end_line) for b in expected.blocks]
    assert any(path == "data/loader.py" for path, _, _ in got)
    check_invariants(repo, Result.from_dict(reply.body), at["file"], 4096, at["line"])


def test_a_repeated_request_is_served_from_the_answer_cache(server, repo):
    at = {**_loader_cursor(repo), "budget": 3000}
    first = server.post("/retrieve", at)
    second = server.post("/retrieve", at)
    assert (first.headers["x-greprag-cache"], second.headers["x-greprag-cache"]) == ("miss", "hit")
    assert second.body == first.body


def test_paths_outside_the_root_are_refused_with_one_line(server, repo, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("SECRET = 1\n")
    (repo / "escape.py").symlink_to(outside)
    try:
        for path in ("../../../etc/passwd", "/etc/passwd", str(outside), "escape.py"):
            reply = server.post("/retrieve", {"file": path, "line": 1})
            assert reply.status == 400, (path, reply.body)
            assert "outside" in reply.body["error"] and "\n" not in reply.body["error"]
        reply = server.get("/read?spec=escape.py:1-1")
        assert reply.status == 400 and "outside" in reply.body["error"]
    finally:
        (repo / "escape.py").unlink()


def test_read_returns_a_range_and_says_how_to_get_the_rest(server, repo):
    lines = read_lines(repo, "data/loader.py")
    reply = server.get("/read?spec=data/loader.py:3-4")
    assert reply.status == 200
    assert reply.body["text"] == "\n".join(lines[2:4])
    assert (reply.body["start_line"], reply.body["end_line"]) == (3, 4)
    assert reply.body["total_lines"] == len(lines)
    posted = server.post("/read", {"spec": "data/loader.py"})
    assert posted.body["text"] == "\n".join(lines) and "more" not in posted.body


def test_bad_requests_get_a_4xx_with_one_line(server):
    cases = [
        (server.post("/retrieve", {"file": "data/loader.py", "line": 10_000}), 400, "past"),
        (server.post("/retrieve", {"file": "data/loader.py", "line": "3"}), 400, "int"),
        (server.post("/retrieve", {"cursor": 3}), 400, "unknown argument"),
        (server.request("POST", "/retrieve", b"{not json"), 400, "not JSON"),
        (server.post("/retrieve", {"left_context": "x" * (2 << 20)}), 413, "bytes"),
        (server.get("/retrieve"), 405, None),
        (server.get("/nowhere"), 404, None),
    ]
    for reply, status, text in cases:
        assert reply.status == status, reply.body
        if text:
            assert text in reply.body["error"] and "\n" not in reply.body["error"]
    assert cases[0][0].body["kind"] == "RetrievalError"


def test_search_answers_as_the_library_does(server, repo, monkeypatch):
    from greprag.server.client import search_remote

    reply = server.post("/search", {"query": "load a batch of rows"})
    monkeypatch.setenv("GREPRAG_CACHE_DIR", str(server.cache))
    forwarded = search_remote(repo, "load a batch of rows", budget=2000)
    assert reply.status == 200 and set(reply.body) >= RESULT_KEYS
    local = Retriever(repo).search("load a batch of rows", budget=2000)
    assert forwarded is not None and forwarded.blocks == local.blocks


def test_host_and_origin_are_checked(server):
    assert server.get("/health", headers={"Host": "evil.example:80"}).status == 403
    origin = {"Origin": "https://evil.example"}
    assert server.get("/status", headers=origin).status == 403
    loopback = {"Origin": f"http://localhost:{server.port}"}
    assert server.get("/status", headers=loopback).status == 200


def test_status_health_and_openapi(server, repo):
    status = server.get("/status").body
    root = status["roots"][0]
    assert root["root"] == str(repo.resolve()) and root["routes"]["grep"] == "ready"
    assert root["watcher"]["running"] is True
    assert server.get("/health").body["status"] == "ok"
    schema = server.get("/openapi.json").body
    assert schema["openapi"].startswith("3.")
    assert {"/retrieve", "/search", "/ask", "/read", "/status", "/health"} <= set(schema["paths"])
    file_param = schema["paths"]["/retrieve"]["post"]["requestBody"]["content"]
    assert "file" in file_param["application/json"]["schema"]["properties"]


def test_the_mcp_endpoint_serves_the_same_tools(server, repo):
    from mcp import Client

    at = _loader_cursor(repo)

    async def session():
        async with Client(f"{server.url}/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            answer = await client.call_tool("retrieve", at)
            refused = await client.call_tool("read", {"spec": "../outside.py:1-2"})
            return names, answer, refused

    names, answer, refused = asyncio.run(session())
    assert {"retrieve", "read", "status"} <= names
    assert not answer.is_error
    assert "# data/loader.py:" in answer.content[0].text
    assert refused.is_error and "outside" in refused.content[0].text


def test_an_edit_never_returns_old_text_and_shows_after_the_debounce(server, repo):
    at = _loader_cursor(repo)
    before = server.post("/retrieve", at)
    assert any(b["path"] == "data/loader.py" for b in before.body["blocks"])
    batches = server.get("/status").body["roots"][0]["watcher"]["batches"]
    loader = repo / "data" / "loader.py"
    text = loader.read_text()
    loader.write_text(text.replace("rows at a time", "rows per EDITED_BATCH"))
    try:
        right_away = server.post("/retrieve", at)  # before the watcher's batch: stats differ
        assert right_away.headers["x-greprag-cache"] == "miss"
        check_invariants(repo, Result.from_dict(right_away.body), at["file"], 4096, at["line"])
        server.wait_settled(after_batches=batches)
        after = server.post("/retrieve", at)
        quoted = "".join(b["text"] for b in after.body["blocks"] if b["path"] == "data/loader.py")
        assert "EDITED_BATCH" in quoted and "rows at a time" not in quoted
    finally:
        loader.write_text(text)


def test_a_new_file_is_found_after_the_debounce(server, repo):
    at = _loader_cursor(repo)
    server.post("/retrieve", at)
    batches = server.get("/status").body["roots"][0]["watcher"]["batches"]
    added = repo / "data" / "late_loader.py"
    added.write_text("class LateLoader:\n    def load_batch(self, index):\n        return []\n")
    try:
        server.wait_settled(after_batches=batches)
        code = {"left_context": "x = LateLoader()\nx.load_batch(", "language": "python"}
        reply = server.post("/retrieve", code)
        assert "data/late_loader.py" in {b["path"] for b in reply.body["blocks"]}
    finally:
        added.unlink()


def _cli(server, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "greprag", "retrieve", *args]
    return subprocess.run(
        argv, env=cli_env(server.cache), capture_output=True, text=True, timeout=120
    )


def test_the_cli_forwards_to_the_running_server(server, repo):
    at = _loader_cursor(repo)
    args = ["--repo", str(repo), "--file", at["file"], "--line", str(at["line"])]
    misses = server.get("/status").body["roots"][0]["answers"]["misses"]
    proc = _cli(server, *args, "--column", str(at["column"]), "--budget", "2500", "--json")
    assert proc.returncode == 0, proc.stderr
    assert server.get("/status").body["roots"][0]["answers"]["misses"] == misses + 1
    forwarded = json.loads(proc.stdout)
    local = Retriever(repo, budget=2500).retrieve(**at).to_dict()
    assert [b["path"] for b in forwarded["blocks"]] == [b["path"] for b in local["blocks"]]
    assert forwarded["context"] == local["context"]


def test_the_cli_reports_a_refusal_as_one_line(server, repo):
    proc = _cli(server, "--repo", str(repo), "--file", "data/loader.py", "--line", "9999")
    assert proc.returncode == 2
    (message,) = proc.stderr.strip().splitlines()
    assert message.startswith("greprag: error: line 9999 is past the end of data/loader.py")


def test_a_token_is_required_when_set_and_to_bind_elsewhere(repo, tmp_path):
    server = start_server([repo], tmp_path / "cache", token=TOKEN)
    try:
        assert server.get("/status", auth=False).status == 401
        assert server.get("/health", auth=False).status == 200
        assert server.get("/status").status == 200
        (runtime,) = (tmp_path / "cache" / "servers").glob("*.json")
        assert json.loads(runtime.read_text())["token"] == TOKEN
        assert runtime.stat().st_mode & 0o777 == 0o600
    finally:
        server.stop()
    assert not list((tmp_path / "cache" / "servers").glob("*.json")), "runtime file left behind"
    proc = subprocess.run(
        [sys.executable, "-m", "greprag", "serve", "--repo", str(repo), "--host", "0.0.0.0"],
        env=cli_env(tmp_path / "cache"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "needs a bearer token" in proc.stderr


def test_an_operation_over_the_time_limit_gets_504(repo):
    import socket
    import threading
    import time

    import uvicorn

    from greprag.server.http import build_app
    from greprag.server.pool import Pool
    from greprag.server.service import Service

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build_app(Service(Pool([repo], watch=False)), port=port, time_limit_s=0.001, mcp=False)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        at = {**_loader_cursor(repo), "budget": 1234}
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        client.request("POST", "/retrieve", body=json.dumps(at), headers={"Host": "127.0.0.1"})
        reply = client.getresponse()
        assert reply.status == 504
        assert json.loads(reply.read())["error"] == "retrieve took longer than 0.001 s"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_an_edited_repo_config_applies_after_the_debounce(server, repo):
    at = _loader_cursor(repo)
    config = repo / ".greprag.toml"
    batches = server.get("/status").body["roots"][0]["watcher"]["batches"]
    config.write_text("budget = 300\n")
    try:
        root = server.wait_settled(after_batches=batches)
        assert root["config_error"] == ""
        assert 0 < server.post("/retrieve", at).body["tokens"] <= 300
        config.write_text("budget = 'a lot'\n")  # invalid: the previous settings stay
        root = server.wait_settled(after_batches=root["watcher"]["batches"])
        assert root["config_error"].startswith(".greprag.toml not applied"), root
        assert 0 < server.post("/retrieve", at).body["tokens"] <= 300
    finally:
        batches = server.get("/status").body["roots"][0]["watcher"]["batches"]
        config.unlink()
        root = server.wait_settled(after_batches=batches)
    assert root["config_error"] == ""
    assert server.post("/retrieve", at).body["tokens"] > 300  # the defaults again
