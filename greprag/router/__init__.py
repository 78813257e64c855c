"""Routers plan the search: a LocalContext in, a QueryPlan (≤ max_queries ``Query``) out.

A *router* decides what to look for: which identifiers, of what kind, through which
rg templates. It runs no search and opens no file. A *route*
(``greprag.routes``) runs searches: grep executes a router's plan, dense embeds the
cursor; both return candidates. ``--router`` picks the planner, ``--routes`` the
searchers.

- ``offline``: ``OfflineRouter``, deterministic; ranks names (``names``), turns them
  into probes (``probes``), with every tuned number in ``RouterWeights``.
- ``llm``: ``LLMRouter`` (``greprag.router.llm``, imported on use), asks a litellm
  model and treats its answer as hostile (``validate``); on any failure the caller
  falls back to ``offline``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from greprag.context import LocalContext
from greprag.models import QueryPlan
from greprag.router.offline import OfflineRouter, RouterWeights

if TYPE_CHECKING:
    from greprag.config import Settings

__all__ = ["ROUTERS", "OfflineRouter", "Router", "RouterWeights"]


class Router(Protocol):
    """Plans the queries for one cursor; ``name`` is what ``QueryPlan.router`` reports."""

    name: str

    def plan(self, ctx: LocalContext, imported: dict[str, str] | None = None) -> QueryPlan:
        """The plan for ``ctx``; ``imported`` maps in-repo imported names to their files."""
        ...


def _llm_router(settings: Settings) -> Router:
    from greprag.router.llm import LLMRouter  # only when asked for: keeps imports cheap

    return LLMRouter.from_settings(settings)


# The ``router`` setting's choices, each built from resolved settings.
ROUTERS: dict[str, Callable[[Settings], Router]] = {
    "offline": OfflineRouter.from_settings,
    "llm": _llm_router,
}
