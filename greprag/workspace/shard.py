"""A shard: some of a workspace's repositories kept warm, each asked in its own thread.

The single-process workspace is one shard holding every repo; on Ray each actor is a
shard (``greprag.workspace.on_ray``). What a repository is asked is a ``RepoCall``: a
picklable callable ``(retriever, repo, budget) -> Result``, so the same shard serves
retrieval and search, in process or on an actor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from greprag.errors import GrepRAGError
from greprag.models import Result
from greprag.workspace.fuse import RepoAnswer
from greprag.workspace.spec import RepoSpec

__all__ = ["RepoCall", "RetrieveCall", "SearchCall", "Shard"]

RepoCall = Callable[[Any, RepoSpec, int], Result]  # (Retriever, repo, budget) -> Result
MAX_THREADS = 8  # rg runs its own threads: more than this only queues


@dataclass(frozen=True)
class RetrieveCall:
    """Context for code before a cursor (``left_context``), from every repository."""

    left_context: str
    language: str | None = None

    def __call__(self, retriever: Any, repo: RepoSpec, budget: int) -> Result:
        return retriever.retrieve(
            left_context=self.left_context, language=self.language, budget=budget
        )


@dataclass(frozen=True)
class SearchCall:
    """A plain-language question to every repository (``Retriever.search``). Asked for
    ``all``, a ``docs`` repository answers with its docs only."""

    query: str
    kind: str = "all"
    k: int | None = None

    def __call__(self, retriever: Any, repo: RepoSpec, budget: int) -> Result:
        kind = "docs" if self.kind == "all" and repo.kind == "docs" else self.kind
        return retriever.search(self.query, budget=budget, k=self.k, kind=kind)


class Shard:
    """``repos`` (each with its place in the workspace) with a warm Retriever each;
    ``settings`` and ``load_dense`` are the Retrievers' (see ``greprag.pipeline``)."""

    def __init__(
        self,
        repos: Sequence[tuple[int, RepoSpec]],
        settings: dict[str, Any] | None = None,
        *,
        load_dense: bool = True,
        threads: int | None = None,
    ) -> None:
        from greprag.pipeline import Retriever

        self.repos = list(repos)
        self.threads = max(1, min(threads or MAX_THREADS, len(self.repos) or 1))
        options = {k: v for k, v in (settings or {}).items() if v is not None}
        with ThreadPoolExecutor(self.threads) as pool:
            paths = [repo.path for _, repo in self.repos]
            opened = pool.map(lambda path: Retriever(path, load_dense=load_dense, **options), paths)
            self.retrievers = list(opened)

    def _ask(self, position: int, call: RepoCall, budget: int) -> RepoAnswer:
        index, repo = self.repos[position]
        answer = RepoAnswer(index, repo.name, repo.weight)
        try:
            answer.result = call(self.retrievers[position], repo, budget)
        except GrepRAGError as exc:
            answer.error, answer.failure = exc.reason, exc
        return answer

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]:
        """Every repository's answer to ``call``, asked in parallel."""
        with ThreadPoolExecutor(self.threads) as pool:
            return list(pool.map(lambda i: self._ask(i, call, budget), range(len(self.repos))))

    def pid(self) -> int:
        """The process holding this shard (on Ray: the actor's)."""
        return os.getpid()
