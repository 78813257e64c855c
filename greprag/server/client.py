"""Forwarding a CLI call to a running server for the same root (standard library only).

The CLI stays fast on warm repos: it finds the server's runtime file, posts the request
over loopback and renders the answer as if it had computed it. When no server is
recorded, or it does not answer the connection, the caller works in-process instead.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from greprag.errors import GrepRAGError
from greprag.models import Result
from greprag.server.runtime import ServerRecord, find_server

__all__ = ["forward", "retrieve_remote", "search_remote"]

CONNECT_TIMEOUT_S = 0.5
ANSWER_TIMEOUT_S = 120.0


def _error_class(kind: object) -> type[GrepRAGError]:
    """The ``greprag.errors`` class the server named (the CLI's exit code follows it)."""
    from greprag import errors

    found = getattr(errors, kind, None) if isinstance(kind, str) else None
    return found if isinstance(found, type) and issubclass(found, GrepRAGError) else GrepRAGError


def _exchange(record: ServerRecord, request: bytes) -> tuple[int, bytes] | None:
    """Send one HTTP/1.1 request (``Connection: close``) and read the whole answer;
    (status, body), or None when the server cannot be reached."""
    try:
        sock = socket.create_connection((record.host, record.port), timeout=CONNECT_TIMEOUT_S)
    except OSError:
        return None
    try:
        sock.settimeout(ANSWER_TIMEOUT_S)
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        return None
    return int(status_line[1]), body


def _post(record: ServerRecord, route: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The server's JSON answer; None when it cannot be reached (the caller falls back).

    A raw socket rather than ``http.client``, whose imports (ssl, email) cost a third of
    a forwarded call's start-up; the server is our own uvicorn, answering with a
    ``Content-Length`` and closing the connection as asked."""
    body = json.dumps(payload).encode()
    head = [
        f"POST {route} HTTP/1.1",
        f"Host: 127.0.0.1:{record.port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if record.token:
        head.append(f"Authorization: Bearer {record.token}")
    reply = _exchange(record, ("\r\n".join(head) + "\r\n\r\n").encode() + body)
    if reply is None:
        return None
    status, data = reply
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if 400 <= status < 500 and isinstance(answer, dict) and "error" in answer:
        raise _error_class(answer.get("kind"))(str(answer["error"]))
    if status != 200 or not isinstance(answer, dict):
        return None
    return answer


def forward(repo: Path, route: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """``payload`` posted to ``route`` of the server running for ``repo``; None when none
    runs (or it did not answer), so the caller works in-process. A request the server
    refuses raises ``GrepRAGError`` with its one-line reason. ``budget`` over the
    server's token cap is not forwarded (in-process has no cap)."""
    root = Path(os.path.realpath(repo))
    record = find_server(root)
    budget = payload.get("budget")
    if record is None or (budget is not None and budget > record.max_tokens):
        return None
    return _post(record, route, {**payload, "repo": str(root)})


def retrieve_remote(
    repo: Path, cursor: dict[str, Any], *, budget: int | None, explain: bool
) -> Result | None:
    """``Retriever.retrieve(**cursor)`` answered by the server running for ``repo``, or
    None when none is (the caller retrieves in-process)."""
    payload = {k: str(v) if isinstance(v, Path) else v for k, v in cursor.items()}
    payload.update(budget=budget, explain=explain or None)
    answer = forward(repo, "/retrieve", {k: v for k, v in payload.items() if v is not None})
    return None if answer is None else Result.from_dict(answer)


def search_remote(repo: Path, query: str, **options: Any) -> Result | None:
    """``Retriever.search(query, **options)`` (budget, k, kind) answered by the server
    running for ``repo``, or None when none is (the caller searches in-process)."""
    payload = {"query": query, **{k: v for k, v in options.items() if v is not None}}
    answer = forward(repo, "/search", payload)
    return None if answer is None else Result.from_dict(answer)
