"""--model completions against a real local HTTP stub (OpenAI-compatible) and a dead port."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from bench.generation import complete, first_line, messages, probe


class _Stub(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        answer = "```\nConsole(width=80)\n```"
        reply = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": answer},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    server.requests = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GREPRAG_API_BASE", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.setenv("GREPRAG_API_KEY", "test")
    yield server
    server.shutdown()


def test_prompt_puts_retrieved_context_before_local_context():
    user = messages("# a.py:1-2\ndef f(): ...", "import a\nx = ", "b.py")[1]["content"]
    assert user.index("def f()") < user.index("import a\nx = ")
    assert first_line("```python\nfoo()\nbar()\n```") == "foo()"


def test_completion_through_a_local_stub(stub):
    assert probe("openai/stub-model") is None
    assert complete("openai/stub-model", "ctx", "x = ", "a.py") == "Console(width=80)"
    assert stub.requests[-1]["model"] == "stub-model"


def test_unreachable_model_is_reported_not_raised(monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the with block ends
    monkeypatch.setenv("GREPRAG_API_BASE", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("GREPRAG_API_KEY", "test")
    reason = probe("openai/stub-model", timeout=5)
    assert reason
    assert complete("openai/stub-model", "", "x = ", "a.py", timeout=5) == ""
