"""``greprag mcp`` and ``greprag serve``: GrepRAG for editors and agents, kept warm.

``mcp`` speaks MCP over stdio (what Claude Code, Cursor and VS Code launch); ``serve``
runs the HTTP JSON API with the MCP endpoint at ``/mcp`` and leaves a runtime file so
``greprag retrieve`` on a served repo forwards to it. Both need the ``serve`` extra and
import it only here, when the command runs.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from greprag.cli.common import EXIT_IO, fail, run
from greprag.cli.workspace import WorkspaceOpt, workspace_paths

__all__ = ["mcp_command", "serve_command"]

DEFAULT_PORT = 8765
_EXTRA = ("mcp", "starlette", "uvicorn", "watchfiles")

ReposOpt = Annotated[
    list[Path] | None,
    typer.Option("--repo", "-r", help="Repository to serve; repeat for several (default: .)."),
]
MaxTokensOpt = Annotated[
    int,
    typer.Option("--max-tokens", help="Token cap of every answer (budgets above it are capped)."),
]
WatchOpt = Annotated[
    bool, typer.Option("--watch/--no-watch", help="Follow file changes (on by default).")
]


def _service(
    repos: list[Path] | None, workspace: Path | None, max_tokens: int, watch: bool
):  # -> Service
    missing = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        names = ", ".join(missing)
        fail(f"the serve extra is not installed ({names}): pip install 'greprag[serve]'", 3)
    if max_tokens < 1:
        fail(f"--max-tokens must be positive, not {max_tokens}")
    from greprag.server.pool import Pool
    from greprag.server.service import Service

    roots = [*(repos or []), *(workspace_paths(workspace) if workspace else [])]
    pool = run(lambda: Pool(roots or [Path(".")], watch=watch))
    return Service(pool, max_tokens=max_tokens)


def mcp_command(
    repo: ReposOpt = None,
    workspace: WorkspaceOpt = None,
    max_tokens: MaxTokensOpt = 8000,
    watch: WatchOpt = True,
) -> None:
    """Serve MCP over stdio (tools: retrieve, read, status; search and ask when built).

    Setup, e.g. Claude Code: claude mcp add greprag -- greprag mcp --repo /path/to/repo
    """
    service = _service(repo, workspace, max_tokens, watch)
    from greprag.server.mcp import run_stdio

    service.pool.start()
    try:
        run_stdio(service)
    finally:
        service.pool.close()


def _token(value: str | None) -> str:
    """``--token``: the text, or ``@path`` to read it from a file (kept out of ``ps``)."""
    if not value:
        return ""
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            value = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            fail(f"cannot read the token file {path}: {exc.strerror or exc}")
    if len(value) < 16:
        fail("the token must be at least 16 characters")
    return value


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say
    # so; with it on, each answer on a kept-alive connection waits 40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_IO)
    sock.set_inheritable(True)
    return sock


def serve_command(
    repo: ReposOpt = None,
    workspace: WorkspaceOpt = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; anything but loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free one).")] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Bearer token clients must send (or @file to read it)."),
    ] = None,
    max_tokens: MaxTokensOpt = 8000,
    watch: WatchOpt = True,
) -> None:
    """Serve the HTTP JSON API and MCP (streamable HTTP at /mcp), kept warm.

    Routes: /retrieve /search /ask /read /status /health /openapi.json.

    While it runs, greprag retrieve on a served repo forwards to it.
    """
    secret = _token(token)
    service = _service(repo, workspace, max_tokens, watch)
    import uvicorn

    from greprag.server.http import build_app
    from greprag.server.runtime import remove_records, write_records

    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    app = run(lambda: build_app(service, host=host, port=bound, token=secret))
    written: list[Path] = []

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                roots = service.pool.roots
                written.extend(write_records(roots, host, bound, secret, max_tokens))
                shown = f"[{host}]" if ":" in host else host
                print(
                    f"greprag: serving {', '.join(map(str, roots))} at http://{shown}:{bound} "
                    "(MCP at /mcp)",
                    file=sys.stderr,
                    flush=True,
                )

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            remove_records(written)  # here: uvicorn re-raises SIGTERM once it has served
            await super().shutdown(sockets)

    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    try:
        Server(config).run(sockets=[sock])
    finally:
        remove_records(written)
