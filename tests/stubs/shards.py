"""Shards that fail for real, for the Ray workspace tests: an actor process that exits in
the middle of a query, and one that answers too late. Importable by Ray's workers (the
tests put the project on their PYTHONPATH)."""

from __future__ import annotations

import os
import time

from greprag.workspace import RepoAnswer, RepoCall, Shard

__all__ = ["VICTIM", "DyingShard", "SlowShard"]

VICTIM = "victim"  # the repo name that marks the shard to fail


class DyingShard(Shard):
    """Its process exits mid-query, once: the first query of the shard holding ``VICTIM``
    leaves a marker beside the repo and kills the actor; the restarted actor answers."""

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]:
        victims = [repo for _, repo in self.repos if repo.name == VICTIM]
        if victims:
            marker = victims[0].path.parent / "actor-died-once"
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                super().answer(call, budget)  # the work is done; the answer never leaves
                os._exit(1)
        return super().answer(call, budget)


class SlowShard(Shard):
    """The shard holding ``VICTIM`` takes a minute to answer any query."""

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]:
        if any(repo.name == VICTIM for _, repo in self.repos):
            time.sleep(60)
        return super().answer(call, budget)
