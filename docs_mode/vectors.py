"""The question's cosine with units the dense index holds.

The dense route returns the nearest chunks; grep's best units may not be among them. Their
vectors are in the index all the same (a unit and its chunk share one identity), so each
gets the cosine it has with the question, and fusion can weigh both kinds of evidence for
every unit near the top of either list.
"""

from __future__ import annotations

__all__ = ["UnitVectors"]


class UnitVectors:
    """Row positions by ``(path, start_line)`` of one dense index, rebuilt when it changes."""

    def __init__(self) -> None:
        self._rows_id = -1
        self._positions: dict[tuple[str, int], int] = {}

    def cosines(
        self,
        route,  # greprag.routes.dense.DenseRoute, after a search brought its index up to date
        question: str,
        keys: list[tuple[str, int]],
        skip: set[str],
    ) -> dict[tuple[str, int], float]:
        """The cosine of ``question`` with each unit of ``keys`` the index holds, files in
        ``skip`` (changed since the index and left out by the route) excepted."""
        snapshot = route.index.snapshot
        if snapshot is None or not keys:
            return {}
        if id(snapshot.rows) != self._rows_id:
            self._positions = {(r.path, r.start_line): i for i, r in enumerate(snapshot.rows)}
            self._rows_id = id(snapshot.rows)
        wanted = [
            (key, at)
            for key in keys
            if key[0] not in skip and (at := self._positions.get(key)) is not None
        ]
        if not wanted:
            return {}
        vector = route.embedder.encode([question])[0]
        matrix = snapshot.matrix()
        return {key: float(matrix[at] @ vector) for key, at in wanted}
