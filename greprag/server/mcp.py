"""The MCP server (official ``mcp`` SDK, 2.x): tools over the ``Service``, stdio or HTTP.

Tools: ``retrieve`` (a cursor by file/line/column, or the code before it), ``read`` (a
file range ``path:start-end``), ``status`` (routes and index freshness), ``search`` (a
question over the docs and code) and ``ask`` (the server's model answers it, citing passages).
Each answer is prompt-ready text within the token cap, opening with what was left out
and how to get more; structured content carries the block list without the text. Bad
input (a path outside the roots, a line past the end) comes back as a tool error of one
line the model can act on.
"""

# no `from __future__ import annotations`: the SDK reads the tools' annotations as objects

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from greprag.errors import GrepRAGError
from greprag.server.service import OPERATIONS, Service

__all__ = ["build_server", "render_answer", "render_result", "run_stdio"]

INSTRUCTIONS = (
    "GrepRAG retrieves cross-file context from the served repositories: the definitions "
    "and usages the code at a cursor depends on, whole blocks packed into a token budget. "
    "Call retrieve with a file and line (or the code before the cursor); read fetches a "
    "file range path:start-end, e.g. a block an answer left out; status lists the roots."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _help(op: str, name: str) -> str:
    return next(p.help for p in OPERATIONS[op] if p.name == name)


def _call(service: Service, op: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        return service.run(op, args).payload
    except GrepRAGError as exc:
        raise ToolError(exc.reason) from None
    except OSError as exc:
        raise ToolError(f"{exc.filename or 'I/O'}: {exc.strerror or exc}") from None


def render_result(payload: dict[str, Any]) -> CallToolResult:
    """A Result-shaped payload as a tool result: summary, what was left out, the context."""
    blocks = payload.get("blocks", [])
    lines = [f"{len(blocks)} block(s), {payload.get('tokens', 0)} tokens."]
    more = payload.get("more")
    if more:
        lines.append(f"Left out: {more['left_out']}. To get more: {more['get_more']}.")
    lines += [f"Note: {note}" for note in payload.get("fallbacks", [])]
    if not blocks:
        lines.append("No cross-file context found.")
    text = "\n".join(lines) + "\n\n" + payload.get("context", "")
    outline = {
        "blocks": [{k: v for k, v in b.items() if k != "text"} for b in blocks],
        "tokens": payload.get("tokens", 0),
        "dropped": payload.get("dropped", []),
        **({"more": more} if more else {}),
    }
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=outline)


def render_answer(payload: dict[str, Any]) -> CallToolResult:
    """An ask payload as a tool result: the answer (or why there is none), then the
    passages it drew on, as ``render_result`` shows them."""
    passages = render_result(payload)
    head = payload.get("answer") or f"No answer: {payload.get('error')}."
    if payload.get("removed_citations"):
        head += "\n(Removed citations of passages not given: "
        head += ", ".join(payload["removed_citations"]) + ")"
    text = f"{head}\n\nPassages: {passages.content[0].text}"
    meta = {
        **(passages.structured_content or {}),
        "answer": payload.get("answer", ""),
        "citations": payload.get("citations", []),
        "error": payload.get("error"),
    }
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=meta)


def _render_read(payload: dict[str, Any]) -> CallToolResult:
    head = (
        f"{payload['path']}:{payload['start_line']}-{payload['end_line']} "
        f"(of {payload['total_lines']} lines)"
    )
    more = payload.get("more")
    if more:
        head += f". Left out: {more['left_out']}. To get more: {more['get_more']}."
    text = f"{head}\n\n{payload['text']}"
    meta = {k: v for k, v in payload.items() if k != "text"}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=meta)


def build_server(service: Service) -> MCPServer:
    """An MCPServer whose tools answer from ``service``."""
    from greprag import __version__

    server = MCPServer(
        "greprag",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )

    def text(op: str, name: str) -> Any:
        return Field(description=_help(op, name))

    @server.tool(
        annotations=_READ_ONLY,
        description="Cross-file context for a cursor: the definitions and usages the code "
        "at (file, line, column) needs, as whole blocks under '# path:start-end' headers, "
        "within a token budget. Give file and line, or left_context.",
    )
    def retrieve(
        file: Annotated[str | None, text("retrieve", "file")] = None,
        line: Annotated[int | None, text("retrieve", "line")] = None,
        column: Annotated[int | None, text("retrieve", "column")] = None,
        left_context: Annotated[str | None, text("retrieve", "left_context")] = None,
        language: Annotated[str | None, text("retrieve", "language")] = None,
        repo: Annotated[str | None, text("retrieve", "repo")] = None,
        budget: Annotated[int | None, text("retrieve", "budget")] = None,
    ) -> CallToolResult:
        args = {
            "file": file,
            "line": line,
            "column": column,
            "left_context": left_context,
            "language": language,
            "repo": repo,
            "budget": budget,
        }
        return render_result(_call(service, "retrieve", args))

    @server.tool(
        annotations=_READ_ONLY,
        description="Search the repository's code and docs for a question, identifiers "
        "or an error message; whole sections and blocks within a token budget.",
    )
    def search(
        query: Annotated[str, text("search", "query")],
        kind: Annotated[str | None, text("search", "kind")] = None,
        k: Annotated[int | None, text("search", "k")] = None,
        repo: Annotated[str | None, text("search", "repo")] = None,
        budget: Annotated[int | None, text("search", "budget")] = None,
    ) -> CallToolResult:
        args = {"query": query, "kind": kind, "k": k, "repo": repo, "budget": budget}
        return render_result(_call(service, "search", args))

    @server.tool(
        annotations=_READ_ONLY,
        description="Answer a question about the repository from its code and docs with "
        "the server's model, citing passages (citations checked against them); without a "
        "model, the passages that would answer.",
    )
    def ask(
        question: Annotated[str, text("ask", "question")],
        kind: Annotated[str | None, text("ask", "kind")] = None,
        k: Annotated[int | None, text("ask", "k")] = None,
        repo: Annotated[str | None, text("ask", "repo")] = None,
        budget: Annotated[int | None, text("ask", "budget")] = None,
    ) -> CallToolResult:
        args = {"question": question, "kind": kind, "k": k, "repo": repo, "budget": budget}
        return render_answer(_call(service, "ask", args))

    @server.tool(
        annotations=_READ_ONLY,
        description="Read lines of a file in a served repository: 'path:start-end' "
        "(1-based, inclusive), 'path:start', or 'path' for the whole file (up to the cap).",
    )
    def read(
        spec: Annotated[str, text("read", "spec")],
        repo: Annotated[str | None, text("read", "repo")] = None,
    ) -> CallToolResult:
        return _render_read(_call(service, "read", {"spec": spec, "repo": repo}))

    @server.tool(
        annotations=_READ_ONLY,
        description="The served repositories: routes available, dense index freshness, "
        "file watcher, answer cache.",
    )
    def status(repo: Annotated[str | None, text("status", "repo")] = None) -> dict[str, Any]:
        return _call(service, "status", {"repo": repo})

    return server


def run_stdio(service: Service) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    build_server(service).run("stdio")
