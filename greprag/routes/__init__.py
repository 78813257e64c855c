"""Routes: each searches the repository for one request and returns candidates.

A *router* (``greprag.router``) decides what to look for: a ``QueryPlan`` of validated rg
queries. A *route* runs a request against the repository and says what it found:

- ``grep``  (``GrepRoute``)  runs the plan's queries in one rg pass per language;
- ``dense`` (``DenseRoute``) embeds the cursor or question and searches the chunk index;
- ``static`` (``StaticRoute``) returns fixed candidates: for tests and examples, the way
  httpx keeps ``MockTransport`` beside its real transports.

Every route takes a ``RouteRequest`` and returns ``RouteHits`` (candidates, skips, notes,
per-query stats, timings); only ``greprag.fusion`` ranks across routes and packs the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from greprag.context import LocalContext, build_local_context
from greprag.cursor_file import CursorFile
from greprag.files import FileCache
from greprag.models import Candidate, QueryPlan, Skip

__all__ = ["QueryStats", "Route", "RouteHits", "RouteRequest"]


@dataclass
class RouteRequest:
    """What one retrieval asks of every route.

    ``files`` is the retrieval's shared line cache (every route reads through it, so a
    file is read once and never from outside the root). ``current`` is the file under the
    cursor (``cursor_line``): the grep and similar routes show only the lines it admits,
    the others none of it. ``text`` is what a text route embeds; ``k`` how many candidates such a
    route returns. ``imported`` maps the cursor file's in-repo imports to the files they
    resolve to. ``rg_threads`` is how many threads each rg process may use (0: rg's
    default, every core): fewer when two routes' passes run at once.
    """

    plan: QueryPlan
    ctx: LocalContext
    files: FileCache
    current: CursorFile = field(default_factory=CursorFile)
    cursor_line: int | None = None
    text: str = ""
    k: int = 20
    imported: dict[str, str] = field(default_factory=dict)
    rg_threads: int = 0

    @classmethod
    def of_text(
        cls, repo: Path, text: str, *, k: int = 20, exclude_path: str | None = None
    ) -> RouteRequest:
        """A request for a text route alone (no plan, no cursor): ``DenseRoute`` tests and
        benchmarks."""
        return cls(
            QueryPlan(queries=[]),
            build_local_context(text),
            FileCache(repo),
            current=CursorFile(exclude_path),
            text=text,
            k=k,
        )


@dataclass
class QueryStats:
    """What one query of the plan found: matched lines, files, and whether it was narrowed."""

    index: int
    hits: int = 0
    files: int = 0
    kept: int = 0
    note: str = ""


@dataclass
class RouteHits:
    """One route's answer: candidates best first (a route's own order), and what it skipped."""

    route: str
    candidates: list[Candidate]
    skipped: list[Skip] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stats: list[QueryStats] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Route(Protocol):
    """A way of finding candidates; ``name`` labels its candidates and timings."""

    name: str

    def search(self, request: RouteRequest) -> RouteHits:
        """Search for ``request``; per-file problems are skips, never exceptions."""
        ...
