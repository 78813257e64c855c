"""Plain data shared by every stage: queries, candidates, blocks and the result."""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

QueryKind = Literal["class", "method", "variable", "other"]
QUERY_KINDS: tuple[str, ...] = get_args(QueryKind)
# why a query was planned (routers produce every one of these; see ``Query``); the last
# six are a question's terms (docs mode: ``docs_mode.keywords``)
QueryPurpose = Literal[
    "definition",
    "usage",
    "wildcard",
    "import",
    "llm",
    "second hop",
    "identifier",
    "keyword",
    "stem",
    "phrase",
    "part",
    "synonym",
]
QUERY_PURPOSES: tuple[str, ...] = get_args(QueryPurpose)
SIMILAR_ROUTE = "similar"  # the route that finds code like the cursor's (routes/similar.py)


@dataclass(frozen=True)
class Query:
    """One ripgrep search: a validated pattern, never a shell command.

    ``fixed`` selects ``rg -F`` (literal) instead of a regex. ``lang`` is a language
    name from ``greprag.languages`` (it becomes ``--type``) or None for all files.
    ``identifier`` is the keyword the query was built from; ``purpose`` says why
    (``definition``, ``usage``, ``wildcard``, ``import``, ``llm``, ``second hop``; for a
    question: ``identifier``, ``keyword``, ``stem``, ``phrase``, ``part``, ``synonym``).
    ``paths`` narrows a query to the files an import resolves to; an entry ending in
    ``/`` stands for the files directly in that folder (a Go package; ``./`` the root).
    """

    pattern: str
    kind: QueryKind = "other"
    fixed: bool = False
    lang: str | None = None
    identifier: str = ""
    purpose: QueryPurpose = "definition"
    weight: float = 1.0
    context_lines: int = 3
    paths: tuple[str, ...] = ()  # when set, only hits in these repo files count

    def limits_to(self, path: str) -> bool:
        """Whether ``path`` is among ``paths``: named, or directly in a named folder."""
        if not self.paths or path in self.paths:
            return bool(self.paths)
        return folder_entry(path) in self.paths

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def folder_entry(path: str) -> str:
    """The ``Query.paths`` entry of the folder directly holding ``path`` (``pkg/``, ``./``)."""
    return f"{posixpath.dirname(path) or '.'}/"


@dataclass
class QueryPlan:
    """What the router decided: the queries (best first) and synonym expansions."""

    queries: list[Query]
    router: str = "offline"
    synonyms: dict[str, list[str]] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)


@dataclass
class Candidate:
    """A hit from a route: a line range of one file (1-based, inclusive)."""

    path: str
    start_line: int
    end_line: int
    text: str
    route: str = "grep"
    query_index: int = -1
    match_lines: tuple[int, ...] = ()
    score: float = 0.0
    queries: tuple[int, ...] = ()
    prior: float = 0.0

    def rescored(self, score: float) -> Candidate:
        """A copy with ``score``: what ``dataclasses.replace`` gives, for a third of its
        time (every retrieval re-scores a few hundred candidates)."""
        return Candidate(
            path=self.path,
            start_line=self.start_line,
            end_line=self.end_line,
            text=self.text,
            route=self.route,
            query_index=self.query_index,
            match_lines=self.match_lines,
            score=score,
            queries=self.queries,
            prior=self.prior,
        )


@dataclass
class Block:
    """A piece of context as it goes into the prompt. ``anchor`` is set for a section of
    an HTML page: ``path#anchor`` is what a browser opens (``text`` is then the page's
    text, not its tags). ``repo`` names the workspace repository it comes from (None
    outside a workspace)."""

    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    route: str = "grep"
    outline: bool = False
    tokens: int = 0
    anchor: str | None = None  # an HTML section's anchor: the browser opens path#anchor
    repo: str | None = None

    def header(self, comment: str = "#") -> str:
        """The line that labels the block in the prompt, as a comment of its language."""
        suffix = " (outline)" if self.outline else ""
        prefix = f"[{self.repo}] " if self.repo else ""
        where = f" {self.path}#{self.anchor}" if self.anchor else ""
        return f"{comment} {prefix}{self.path}:{self.start_line}-{self.end_line}{where}{suffix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Skip:
    """A file a route did not read, and why (binary, too large, minified, ...)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Drop:
    """A block left out of the packed context, and why."""

    path: str
    start_line: int
    end_line: int
    reason: str
    score: float = 0.0


@dataclass(frozen=True)
class QueryReport:
    """One query of the plan, as ``--explain`` shows it: what it found and kept."""

    pattern: str
    kind: str
    purpose: str
    weight: float
    hits: int
    files: int
    kept: int
    note: str


@dataclass(frozen=True)
class MergeReport:
    """Several hits merged into one block."""

    path: str
    start_line: int
    end_line: int
    members: int
    score: float


@dataclass
class Explain:
    """Why a retrieval came out as it did: the cursor as understood, each query's
    hits, and which hits were merged (``--explain``)."""

    local_context: dict[str, Any]
    queries: list[QueryReport]
    candidates: int
    merged: list[MergeReport]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Result:
    """Everything one retrieval produced; ``context`` is prompt-ready. ``missing`` names
    the workspace repositories a partial answer lacks (a shard that failed or timed out)."""

    blocks: list[Block]
    context: str
    tokens: int
    queries: list[Query]
    timings: dict[str, float]
    router: str
    fallbacks: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    dropped: list[Drop] = field(default_factory=list)
    routes: dict[str, str] = field(default_factory=dict)
    explain: Explain | None = None
    missing: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """The inverse of ``to_dict`` (with ``explain`` when present): a Result received
        as JSON, e.g. from a running server, renders like one computed here."""
        explain = data.get("explain")
        return cls(
            blocks=[Block(**b) for b in data["blocks"]],
            context=data["context"],
            tokens=data["tokens"],
            queries=[Query(**{**q, "paths": tuple(q.get("paths", ()))}) for q in data["queries"]],
            timings=dict(data["timings_ms"]),
            router=data["router"],
            fallbacks=list(data.get("fallbacks", [])),
            skipped=[Skip(**s) for s in data.get("skipped", [])],
            dropped=[Drop(**d) for d in data.get("dropped", [])],
            routes=dict(data.get("routes", {})),
            missing=list(data.get("missing", [])),
            explain=None
            if explain is None
            else Explain(
                local_context=explain["local_context"],
                queries=[QueryReport(**q) for q in explain["queries"]],
                candidates=explain["candidates"],
                merged=[MergeReport(**m) for m in explain["merged"]],
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape printed by ``greprag retrieve --json``."""
        return {
            "router": self.router,
            "tokens": self.tokens,
            "blocks": [b.to_dict() for b in self.blocks],
            "context": self.context,
            "queries": [q.to_dict() for q in self.queries],
            "timings_ms": {k: round(v, 3) for k, v in self.timings.items()},
            "fallbacks": list(self.fallbacks),
            "skipped": [asdict(s) for s in self.skipped],
            "dropped": [asdict(d) for d in self.dropped],
            "routes": dict(self.routes),
            "missing": list(self.missing),
        }
