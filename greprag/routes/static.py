"""A route that returns fixed candidates: for tests, examples and experiments.

>>> from greprag import Retriever
>>> from greprag.models import Candidate
>>> from greprag.routes.static import StaticRoute
>>> hit = Candidate("pkg/util.py", 10, 14, "def helper(): ...", prior=1.0)
>>> retriever = Retriever("path/to/repo", routes=[StaticRoute([hit])])

Its candidates then go through the same scoring, dedup, widening and packing as grep's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from greprag.models import Candidate
from greprag.routes import RouteHits, RouteRequest

__all__ = ["StaticRoute"]


class StaticRoute:
    """Answers every request with the same candidates, or with ``answer(request)``.

    Candidates from the file under the cursor are left out, as every route must.
    """

    def __init__(
        self,
        candidates: Sequence[Candidate] | Callable[[RouteRequest], Sequence[Candidate]],
        name: str = "static",
    ) -> None:
        self.name = name
        self._answer = candidates if callable(candidates) else (lambda _request: candidates)

    def search(self, request: RouteRequest) -> RouteHits:
        kept = [
            replace(c, route=self.name)
            for c in self._answer(request)
            if c.path != request.current.path and request.files.allowed(c.path)
        ]
        return RouteHits(self.name, kept)
