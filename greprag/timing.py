"""Stage timings of one retrieval or search, in milliseconds."""

from __future__ import annotations

import time

__all__ = ["Clock"]


class Clock:
    """Stage timings in milliseconds, one lap per stage."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = (now - self.last) * 1000
        self.last = now

    def total(self) -> dict[str, float]:
        self.timings["total"] = (time.perf_counter() - self.start) * 1000
        return self.timings
