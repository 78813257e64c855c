"""Transport-free operations of the server: retrieve, search, ask, read, status, health.

``retrieve``, ``search`` and ``ask`` return the CLI's ``--json`` shape
(``Result.to_dict()``); ``read`` a file range; ``status`` the routes and freshness of each
served root. Every answer is bounded by a token cap (``max_tokens``, default 8,000, well
under the 25,000 tokens MCP clients cut at): the context never exceeds it, and what did
not fit is named under ``more`` with how to get it. Transports validate nothing
themselves: ``Service.run`` checks every argument against ``OPERATIONS``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from greprag.errors import GrepRAGError, RetrievalError, SearchError
from greprag.files import read_text
from greprag.server.pool import Pool, Workspace

__all__ = ["DEFAULT_MAX_TOKENS", "OPERATIONS", "Answer", "Param", "Service"]

DEFAULT_MAX_TOKENS = 8000


@dataclass(frozen=True)
class Param:
    """One argument of an operation: its JSON type, what it means, whether it is required."""

    name: str
    kind: type
    help: str
    required: bool = False


_REPO = Param(
    "repo",
    str,
    "Served repository (its path or folder name); default: the only one, or the one "
    "holding an absolute file path.",
)
_BUDGET = Param("budget", int, "Token budget of the context (at most the server's cap).")

OPERATIONS: dict[str, tuple[Param, ...]] = {
    "retrieve": (
        Param("file", str, "File under the cursor, relative to the repository (or absolute)."),
        Param("line", int, "Cursor line, 1-based."),
        Param("column", int, "Cursor column, 0-based (default: end of the line)."),
        Param("left_context", str, "The code before the cursor, instead of file and line."),
        Param("language", str, "Language of left_context (python, java, typescript, ...)."),
        _REPO,
        _BUDGET,
        Param("explain", bool, "Add the explain record: queries, hits, merges."),
    ),
    "search": (
        Param("query", str, "What to look for: a question, identifiers, an error.", True),
        _REPO,
        _BUDGET,
        Param("k", int, "How many sections or blocks to consider."),
        Param("kind", str, "What to search: all (default), code or docs."),
    ),
    "ask": (
        Param("question", str, "A question about the repository's code or docs.", True),
        _REPO,
        _BUDGET,
        Param("k", int, "How many sections or blocks the answer may draw on."),
        Param("kind", str, "What to draw on: all (default), code or docs."),
    ),
    "read": (
        Param(
            "spec",
            str,
            "path:start-end (lines 1-based, inclusive), path:start, or a path alone.",
            True,
        ),
        _REPO,
    ),
    "status": (_REPO,),
    "health": (),
}


@dataclass(frozen=True)
class Answer:
    """An operation's JSON data; ``cached`` when it was served from the answer cache."""

    payload: dict[str, Any]
    cached: bool = False


def _check(op: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` checked against the operation's parameters (None means absent)."""
    params = {p.name: p for p in OPERATIONS[op]}
    unknown = sorted(set(args) - set(params))
    if unknown:
        known = ", ".join(params) or "none"
        raise GrepRAGError(f"unknown argument {unknown[0]!r} for {op} (known: {known})")
    checked = {}
    for name, value in args.items():
        if value is None:
            continue
        kind = params[name].kind
        if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
            raise GrepRAGError(f"{op}: {name} must be a {kind.__name__}, not {value!r}"[:200])
        checked[name] = value
    for param in params.values():
        if param.required and param.name not in checked:
            raise GrepRAGError(f"{op}: {param.name} is required")
    return checked


class Service:
    """The operations over a ``Pool`` of served roots, each answer within ``max_tokens``."""

    def __init__(self, pool: Pool, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.pool = pool
        self.max_tokens = max_tokens

    def run(self, op: str, args: dict[str, Any]) -> Answer:
        """Operation ``op`` with JSON ``args``; ``GrepRAGError`` (one line) for bad input."""
        if op not in OPERATIONS:
            raise GrepRAGError(f"unknown operation {op!r} (known: {', '.join(OPERATIONS)})")
        return getattr(self, f"_{op}")(**_check(op, args))

    # -- convenience for library callers: the payload alone -------------------------------
    def retrieve(self, **args: Any) -> dict[str, Any]:
        return self.run("retrieve", args).payload

    def search(self, query: str, **args: Any) -> dict[str, Any]:
        return self.run("search", {"query": query, **args}).payload

    def ask(self, question: str, **args: Any) -> dict[str, Any]:
        return self.run("ask", {"question": question, **args}).payload

    def read(self, spec: str, **args: Any) -> dict[str, Any]:
        return self.run("read", {"spec": spec, **args}).payload

    def status(self, **args: Any) -> dict[str, Any]:
        return self.run("status", args).payload

    def health(self) -> dict[str, Any]:
        return self.run("health", {}).payload

    # -- operations -------------------------------------------------------------------------
    def _retrieve(
        self,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        left_context: str | None = None,
        language: str | None = None,
        repo: str | None = None,
        budget: int | None = None,
        explain: bool = False,
    ) -> Answer:
        ws = self.pool.workspace(repo, file)
        if file is not None:
            file = self.pool.relative(ws, file)
        elif left_context is None:
            raise RetrievalError("give file and line, or left_context (the code before the cursor)")
        used, asked = self._budget(ws, budget)
        text_key = hashlib.sha1(left_context.encode()).hexdigest() if left_context else None
        key = ("retrieve", file, line, column, text_key, language, used, explain)

        def compute() -> Any:
            return ws.retriever.retrieve(
                file=file,
                line=line,
                column=column,
                left_context=left_context,
                language=language,
                budget=used,
            )

        return self._answer(ws, key, compute, used, asked, explain, [file] if file else [])

    def _search(
        self,
        query: str,
        repo: str | None = None,
        budget: int | None = None,
        k: int | None = None,
        kind: str = "all",
    ) -> Answer:
        ws = self.pool.workspace(repo)
        used, asked = self._budget(ws, budget)
        key = ("search", query, used, k, kind)

        def compute() -> Any:
            return ws.retriever.search(query, budget=used, k=k, kind=kind)

        return self._answer(ws, key, compute, used, asked, False, [])

    def _ask(
        self,
        question: str,
        repo: str | None = None,
        budget: int | None = None,
        k: int | None = None,
        kind: str = "all",
    ) -> Answer:
        """The search's payload plus the model's checked answer (``answer``, ``citations``;
        ``error`` when no model is configured or it failed: the passages still come)."""
        ws = self.pool.workspace(repo)
        used, asked = self._budget(ws, budget)
        answer = ws.retriever.ask(question, budget=used, k=k, kind=kind)
        return Answer(self._bounded(answer.to_dict(), used, asked))

    def _read(self, spec: str, repo: str | None = None) -> Answer:
        from greprag.tokens import count_tokens

        path, start, end = _parse_range(spec)
        ws = self.pool.workspace(repo, path)
        relative = self.pool.relative(ws, path)
        text = read_text(ws.root, relative)
        if text is None:
            raise RetrievalError(f"cannot read {relative}: not a readable file in the repository")
        if "\x00" in text:
            raise RetrievalError(f"{relative} is a binary file")
        lines = text.splitlines()
        total = len(lines)
        end = total if end is None else min(end, total)
        if start > max(total, 1):
            raise RetrievalError(f"{relative} has {total} lines; {spec} is past the end")
        used = 0
        last = start - 1
        while last < end:
            cost = count_tokens(lines[last] + "\n")
            if used + cost > self.max_tokens:
                break
            used += cost
            last += 1
        payload: dict[str, Any] = {
            "path": relative,
            "start_line": start,
            "end_line": last,
            "total_lines": total,
            "text": "\n".join(lines[start - 1 : last]),
            "tokens": used,
        }
        if last < end:
            rest = f"{relative}:{last + 1}-{end}"
            payload["more"] = {
                "left_out": f"lines {last + 1}-{end} (over the {self.max_tokens}-token cap)",
                "get_more": f"read {rest}",
            }
        return Answer(payload)

    def _status(self, repo: str | None = None) -> Answer:
        from greprag import __version__

        chosen = [self.pool.workspace(repo)] if repo else list(self.pool.workspaces.values())
        return Answer(
            {
                "version": __version__,
                "max_tokens": self.max_tokens,
                "roots": [_root_status(ws) for ws in chosen],
            }
        )

    def _health(self) -> Answer:
        from greprag import __version__

        return Answer({"status": "ok", "version": __version__, "pid": os.getpid()})

    # -- shared -----------------------------------------------------------------------------
    def _budget(self, ws: Workspace, asked: int | None) -> tuple[int, int | None]:
        """The budget to use (at most the cap) and the one asked for."""
        if asked is not None and asked < 1:
            raise RetrievalError(f"budget must be a positive number of tokens, not {asked}")
        wanted = ws.retriever.settings.budget if asked is None else asked
        return min(wanted, self.max_tokens), asked

    def _answer(
        self,
        ws: Workspace,
        key: Hashable,
        compute: Any,
        used: int,
        asked: int | None,
        explain: bool,
        extra_paths: list[str],
    ) -> Answer:
        """A Result-shaped answer, from the cache while its files are unchanged."""
        cached = ws.answers.get(key)
        if cached is not None:
            return Answer(cached, cached=True)
        begun = ws.answers.begin()
        try:
            result = compute()
        except SearchError:
            # rg stops when a file of its cached list vanished before the watcher's batch
            # arrived: list the files again and search once more
            ws.retriever.invalidate(None)
            result = compute()
        payload = result.to_dict()
        if explain and result.explain is not None:
            payload["explain"] = result.explain.to_dict()
        payload = self._bounded(payload, used, asked)
        ws.answers.put(key, payload, [b.path for b in result.blocks] + extra_paths, begun)
        return Answer(payload)

    def _bounded(self, payload: dict[str, Any], used: int, asked: int | None) -> dict[str, Any]:
        """``payload`` with ``more``: what the budget or the cap left out, how to get it."""
        dropped = payload.get("dropped") or []
        capped = asked is not None and asked > self.max_tokens
        if not dropped and not capped:
            return payload
        left_out = []
        if dropped:
            left_out.append(f"{len(dropped)} block(s) did not fit the {used}-token budget")
        if capped:
            left_out.append(f"the budget was capped at {self.max_tokens} tokens (asked {asked})")
        ways = []
        if dropped:
            first = dropped[0]
            ways.append(
                f"read a dropped block by path:start-end (e.g. "
                f"{first['path']}:{first['start_line']}-{first['end_line']})"
            )
        if used < self.max_tokens:
            ways.append(f"ask again with a larger budget (at most {self.max_tokens})")
        payload["more"] = {"left_out": "; ".join(left_out), "get_more": "; or ".join(ways)}
        return payload


_RANGE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


def _parse_range(spec: str) -> tuple[str, int, int | None]:
    """``path:start-end`` → (path, start, end); ``path:start`` one line; ``path`` whole."""
    spec = spec.strip()
    if not spec:
        raise RetrievalError("read needs path:start-end")
    found = _RANGE.match(spec)
    if found is None:
        return spec, 1, None
    start = int(found["start"])
    end = int(found["end"]) if found["end"] else start
    if start < 1 or end < start:
        raise RetrievalError(f"bad line range in {spec!r}: lines are 1-based, start <= end")
    return found["path"], start, end


def _root_status(ws: Workspace) -> dict[str, Any]:
    """Routes, dense index freshness, watcher and cache of one served root."""
    from greprag.routes.dense import dense_available

    retriever = ws.retriever
    refreshing = ws.refresher.busy  # then the index is locked: do not wait for it
    freshness = None if refreshing else retriever.dense.freshness()
    if refreshing:
        dense = "refreshing the index in the background"
    elif freshness is not None:
        dense = (
            f"ready: {freshness['files']} files indexed; {freshness['changed']} changed and "
            f"{freshness['deleted']} deleted since (refreshed in the background)"
        )
    elif not dense_available():
        dense = "not installed (pip install 'greprag[dense]')"
    elif retriever.settings.routes == "grep":
        dense = "off (routes = grep)"
    else:
        dense = f"no index (run: greprag index --repo {ws.root})"
    watcher = ws.watcher
    return {
        "root": str(ws.root),
        "routes": {"grep": "ready", "dense": dense},
        "dense_index": freshness,
        "watcher": {
            "running": bool(watcher and watcher.running),
            "batches": watcher.batches if watcher else 0,
            "changed_files": ws.changed_files,
            "error": watcher.error if watcher else "not watching (started with watching off)",
        },
        "settled": ws.settled(),
        "config_error": ws.config_error,
        "refresh_error": ws.refresher.error,
        "answers": {"kept": len(ws.answers), "hits": ws.answers.hits, "misses": ws.answers.misses},
    }
