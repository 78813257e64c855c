"""The HTTP JSON API (Starlette on uvicorn), with the MCP endpoint in the same app.

Routes: ``POST /retrieve``, ``/search``, ``/ask``; ``GET`` or ``POST /read``; ``GET
/status``, ``/health``, ``/openapi.json``; MCP over streamable HTTP at ``/mcp``. Answers
are the CLI's ``--json`` shape; ``X-GrepRAG-Cache: hit`` marks one served from the answer
cache. Safe by default: a loopback server accepts only loopback ``Host`` and ``Origin``
headers (DNS rebinding); a bearer token is required on every route but ``/health`` when
one is set (and one must be set to bind any other address); bodies over ``max_body``
bytes get 413, operations over ``time_limit_s`` 504; bad input a 4xx whose JSON
``error`` is one line (and ``kind`` the ``greprag.errors`` class).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from greprag.errors import GrepRAGError
from greprag.server.service import OPERATIONS, Service

__all__ = ["MAX_BODY_BYTES", "TIME_LIMIT_S", "build_app", "is_loopback", "openapi_schema"]

MAX_BODY_BYTES = 1 << 20
TIME_LIMIT_S = 60.0
_POST_OPS = ("retrieve", "search", "ask", "read")
_GET_OPS = ("read", "status", "health")
_OPEN_PATHS = frozenset({"/health"})  # no token needed: says only that the server is up


def is_loopback(host: str) -> bool:
    """``host`` (a bind address or name) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _error(
    status: int, message: str, headers: dict[str, str] | None = None, kind: str = ""
) -> JSONResponse:
    body = {"error": message, **({"kind": kind} if kind else {})}
    return JSONResponse(body, status_code=status, headers=headers)


class Guard:
    """Host and Origin checks, the bearer token and the body-size limit, before any route."""

    def __init__(self, app: ASGIApp, *, host: str, port: int, token: str, max_body: int) -> None:
        self.app = app
        self.token = token.encode()
        self.max_body = max_body
        names = ("127.0.0.1", "localhost", "[::1]")
        self.hosts = {f"{n}:{port}" for n in names} | set(names) if is_loopback(host) else None
        self.origins = {f"http://{n}:{port}" for n in names}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope["path"], headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, path: str, headers: dict[str, str]) -> Response | None:
        if self.hosts is not None and headers.get("host", "") not in self.hosts:
            return _error(403, "Host header not allowed (the server answers loopback names)")
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return _error(403, f"Origin not allowed: {origin[:100]}")
        if self.token and path not in _OPEN_PATHS:
            given = headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, b"Bearer " + self.token):
                bearer = {"WWW-Authenticate": "Bearer"}
                return _error(401, "a bearer token is required (Authorization: Bearer ...)", bearer)
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > self.max_body:
            return _error(413, f"request body over {self.max_body} bytes")
        return None


async def _body(request: Request, max_body: int) -> dict[str, Any]:
    if request.method == "GET":
        return dict(request.query_params)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > max_body:
            raise _Refused(413, f"request body over {max_body} bytes")
    if not data:
        return {}
    try:
        args = json.loads(data)
    except ValueError:
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(args, dict):
        raise _Refused(400, "the request body must be a JSON object")
    return args


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _endpoint(service: Service, op: str, max_body: int, time_limit_s: float):
    async def endpoint(request: Request) -> Response:
        try:
            args = await _body(request, max_body)
            with anyio.fail_after(time_limit_s):
                answer = await anyio.to_thread.run_sync(
                    service.run, op, args, abandon_on_cancel=True
                )
        except _Refused as exc:
            return _error(exc.status, exc.message)
        except GrepRAGError as exc:  # kind: the error class, so a CLI exits as it would here
            return _error(400, exc.reason, kind=type(exc).__name__)
        except TimeoutError:  # before OSError, of which it is a kind
            return _error(504, f"{op} took longer than {time_limit_s:g} s")
        except OSError as exc:
            return _error(400, f"{exc.filename or 'I/O'}: {exc.strerror or exc}")
        cache = {"X-GrepRAG-Cache": "hit" if answer.cached else "miss"}
        return JSONResponse(answer.payload, headers=cache)

    return endpoint


_JSON_TYPES = {str: "string", int: "integer", bool: "boolean"}


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI 3.1 document, built from the operations' parameter table."""
    from greprag import __version__

    paths: dict[str, Any] = {}
    for op, params in OPERATIONS.items():
        properties = {p.name: {"type": _JSON_TYPES[p.kind], "description": p.help} for p in params}
        required = [p.name for p in params if p.required]
        answers = {
            "200": {"description": "The answer (retrieve, search, ask: the CLI's --json shape)"},
            "400": {"description": "Bad input: {'error': one line}"},
            "401": {"description": "Missing or wrong bearer token"},
        }
        entry: dict[str, Any] = {}
        if op in _POST_OPS:
            schema = {"type": "object", "properties": properties, "required": required}
            entry["post"] = {
                "operationId": op,
                "requestBody": {"content": {"application/json": {"schema": schema}}},
                "responses": answers,
            }
        if op in _GET_OPS:
            query = [
                {"name": name, "in": "query", "required": name in required, "schema": spec}
                for name, spec in properties.items()
            ]
            entry["get"] = {"operationId": f"{op}_get", "parameters": query, "responses": answers}
        paths[f"/{op}"] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": "GrepRAG", "version": __version__},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
    }


def build_app(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str = "",
    max_body: int = MAX_BODY_BYTES,
    time_limit_s: float = TIME_LIMIT_S,
    mcp: bool = True,
) -> ASGIApp:
    """The ASGI app: the JSON routes, ``/openapi.json`` and (``mcp``) ``/mcp``; its
    lifespan starts the pool's watchers and stops them."""
    if not token and not is_loopback(host):
        raise GrepRAGError(f"binding {host} (not loopback) needs a bearer token (--token)")
    schema = openapi_schema()

    async def openapi(_: Request) -> Response:
        return JSONResponse(schema)

    routes: list[Any] = [Route("/openapi.json", openapi, methods=["GET"])]
    for op in OPERATIONS:
        methods = [m for m, ops in (("POST", _POST_OPS), ("GET", _GET_OPS)) if op in ops]
        endpoint = _endpoint(service, op, max_body, time_limit_s)
        routes.append(Route(f"/{op}", endpoint, methods=methods))
    mcp_server = None
    if mcp:
        from mcp.server.transport_security import TransportSecuritySettings

        from greprag.server.mcp import build_server

        mcp_server = build_server(service)
        inner = mcp_server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            max_request_body_size=max_body,
            # Host and Origin are checked by Guard for every route, /mcp included
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        routes += inner.routes

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(service.pool.start)
        try:
            if mcp_server is not None:
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            service.pool.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, host=host, port=port, token=token, max_body=max_body)
