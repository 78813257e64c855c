"""A Workspace: one query over many repositories, fused into one ranking.

The backend holds the repos warm and returns each one's answer: ``LocalBackend`` (one
process, a thread per repo) or ``RayBackend`` (shards on Ray actors; the ``ray`` extra).
Either way the answers are fused here, by ``greprag.workspace.fuse``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Protocol

from greprag.config import load_settings
from greprag.models import Result
from greprag.workspace.fuse import RepoAnswer, fuse
from greprag.workspace.shard import RepoCall, RetrieveCall, SearchCall, Shard
from greprag.workspace.spec import RayOptions, WorkspaceSpec

__all__ = ["Backend", "LocalBackend", "Workspace", "open_workspace", "ray_options"]


class Backend(Protocol):
    """Where a workspace's repositories live and answer."""

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]: ...

    def close(self) -> None: ...


class LocalBackend:
    """Every repository in this process, as one shard."""

    def __init__(
        self, spec: WorkspaceSpec, settings: dict[str, Any], *, load_dense: bool = True
    ) -> None:
        self.shard = Shard(list(enumerate(spec.repos)), settings, load_dense=load_dense)

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]:
        return self.shard.answer(call, budget)

    def close(self) -> None:
        """Nothing to release: the retrievers go with the process."""


class Workspace:
    """Query ``spec``'s repositories as one (see ``run``); ``settings`` are Retriever
    settings applied to every repo (a repo's ``.greprag.toml`` still tunes its own)."""

    def __init__(self, spec: WorkspaceSpec, backend: Backend, **settings: Any) -> None:
        self.spec = spec
        self.backend = backend
        self.settings = load_settings(None, **settings)

    def run(self, call: RepoCall, *, budget: int | None = None) -> Result:
        """``call`` asked of every repository, fused within ``budget`` tokens. Raises the
        repos' error when none answered; a partial answer names the missing ones."""
        started = time.perf_counter()
        budget = budget or self.settings.budget
        answers = self.backend.answer(call, budget)
        failures = [a.failure for a in answers if a.result is None and a.failure is not None]
        if failures and len(failures) == len(answers):
            raise failures[0]
        fused = time.perf_counter()
        result = fuse(answers, budget=budget, encoding=self.settings.encoding)
        now = time.perf_counter()
        result.timings["fuse"] = (now - fused) * 1000
        result.timings["total"] = (now - started) * 1000
        return result

    def retrieve(
        self, left_context: str, *, language: str | None = None, budget: int | None = None
    ) -> Result:
        """Context for the code before a cursor (``left_context``) from every repo."""
        return self.run(RetrieveCall(left_context, language), budget=budget)

    def search(
        self, query: str, *, kind: str = "all", k: int | None = None, budget: int | None = None
    ) -> Result:
        """The sections and definitions of every repo that answer ``query``, fused."""
        return self.run(SearchCall(query, kind, k), budget=budget)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ray_options(spec: WorkspaceSpec, ray: bool, ray_address: str | None) -> RayOptions | None:
    """Where the workspace runs: Ray when ``ray``, ``ray_address`` or the file's ``[ray]``
    table asks for it (the flags win over the file), else None (this process)."""
    if not (ray or ray_address):
        return spec.ray
    base = spec.ray or RayOptions()
    return replace(base, address=ray_address or base.address)


def open_workspace(
    spec: WorkspaceSpec,
    *,
    ray: bool = False,
    ray_address: str | None = None,
    load_dense: bool = True,
    **settings: Any,
) -> Workspace:
    """The workspace on its backend (``ray_options``); ``load_dense`` and ``settings`` go
    to every repo's Retriever."""
    options = ray_options(spec, ray, ray_address)
    given = {k: v for k, v in settings.items() if v is not None}
    if options is None:
        return Workspace(spec, LocalBackend(spec, given, load_dense=load_dense), **given)
    from greprag.workspace.on_ray import RayBackend

    backend = RayBackend(spec, options, given, load_dense=load_dense)
    return Workspace(spec, backend, **given)
