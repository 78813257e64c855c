"""A tiny OpenAI-compatible chat server on 127.0.0.1 for tests (real HTTP, no network).

with OpenAIStub() as stub:
    stub.reply(content='{"queries": []}', delay=0.0, status=200)
    ... litellm.completion(model="openai/stub-model", api_base=stub.api_base, ...)
    stub.requests  # JSON bodies received, in order; stub.headers their headers

A request with ``"stream": true`` gets the content as server-sent events in small pieces.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PATHS = ("/v1/chat/completions", "/chat/completions")
STREAM_PIECE = 7  # characters per streamed chunk: citations arrive split across chunks


class OpenAIStub:
    """Serves POST /v1/chat/completions with a configurable reply; records requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.content = "{}"
        self.delay = 0.0
        self.status = 200
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, content: str = "{}", *, delay: float = 0.0, status: int = 200) -> None:
        """Set what the next requests get: message ``content``, after ``delay`` s, ``status``."""
        self.content, self.delay, self.status = content, delay, status
        self.requests.clear()
        self.headers.clear()

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # wakes handlers still sleeping out a delay
        self._server.shutdown()
        self._server.server_close()

    def _body(self, model: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _chunk(self, model: str, delta: dict[str, str], finish: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                if self.path not in _PATHS:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                stub.requests.append(payload)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                if stub._closing.wait(stub.delay):
                    return
                if stub.status != 200:
                    self._send(stub.status, {"error": {"message": "stub failure"}})
                    return
                if payload.get("stream"):
                    self._stream(str(payload.get("model", "")))
                    return
                self._send(200, stub._body(str(payload.get("model", ""))))

            def _stream(self, model: str) -> None:
                """Server-sent events, as OpenAI streams: the content in small pieces."""
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    text = stub.content
                    for start in range(0, len(text), STREAM_PIECE):
                        delta = {"content": text[start : start + STREAM_PIECE]}
                        self._event(stub._chunk(model, delta, None))
                    self._event(stub._chunk(model, {}, "stop"))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _event(self, body: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(body).encode() + b"\n\n")
                self.wfile.flush()

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
