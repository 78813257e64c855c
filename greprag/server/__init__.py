"""GrepRAG as a warm server: an MCP server (stdio and streamable HTTP) and an HTTP JSON API.

The layers, bottom up: ``pool`` (one warm ``Retriever`` per served root; paths never leave
the roots), ``watch`` (file events → ``Retriever.invalidate``, dense refresh in the
background), ``answers`` (repeated requests answered while their files are unchanged),
``service`` (transport-free operations returning the CLI's ``--json`` shape, bounded by a
token cap), then the transports ``http`` (Starlette on uvicorn) and ``mcp`` (the official
SDK). ``runtime`` and ``client`` let the CLI find a running server and forward to it.

Nothing here is imported by ``import greprag`` or the CLI's help: the ``serve`` extra
(mcp, starlette, uvicorn, watchfiles) loads only when a server starts.
"""
