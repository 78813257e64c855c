"""Adaptive routing: run the dense route only where grep evidence is weak.

``auto`` adds ``dense`` when grep found nothing or little, when every identifier it
searched is generic, when the cursor is on a member access whose receiver's type the
local context never names (``self.store.`` with ``store`` set elsewhere), when it is on a
member access of any object (``item.``: even with the type named, the member may be
inherited from a class the local context never names; not after ``self.``, an imported
module or a class name), or when the query is prose rather than code. Measured on the
benchmark's implicit subset, the wider member-access trigger is what lets dense help
(docs/benchmarks.md, "Dense route").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from greprag.config import Settings
from greprag.context import LocalContext, is_prose, member_receiver, untyped_receiver
from greprag.errors import DenseError
from greprag.fusion.fuse import fuse
from greprag.languages import is_generic
from greprag.models import Candidate, Query, Skip
from greprag.routes import RouteHits, RouteRequest

__all__ = ["DenseJoin", "Joined", "choose_routes"]

FEW_HITS = 3


def choose_routes(
    mode: str,
    *,
    grep_candidates: list[Candidate],
    queries: list[Query],
    ctx: LocalContext,
    dense_installed: bool,
) -> tuple[list[str], str]:
    """The routes to run (``grep`` and/or ``dense``) and a reason a person can read."""
    if mode == "grep":
        return ["grep"], "grep requested"
    if not dense_installed:
        return ["grep"], "dense extra not installed"
    if mode == "dense":
        return ["dense"], "dense requested"
    if mode != "auto":
        raise ValueError(f"unknown routes mode: {mode!r} (grep, dense or auto)")
    reasons = []
    if is_prose(ctx):
        reasons.append("prose query")
    if not grep_candidates:
        reasons.append("grep found nothing")
    elif len(grep_candidates) < FEW_HITS:
        reasons.append(f"grep found only {len(grep_candidates)} hit(s)")
    names = sorted({q.identifier for q in queries if q.identifier})
    if names and all(is_generic(n) for n in names):
        reasons.append(f"only generic identifiers ({', '.join(names)})")
    receiver = untyped_receiver(ctx)
    if receiver:
        reasons.append(f"member access on `{receiver}`, whose type the local context does not name")
    elif (receiver := member_receiver(ctx)) is not None:
        reasons.append(
            f"member access on `{receiver}`: the member may be inherited from a class "
            "the local context does not name"
        )
    if reasons:
        return ["grep", "dense"], "; ".join(reasons)
    return ["grep"], f"grep evidence strong ({len(grep_candidates)} hits)"


@dataclass
class Joined:
    """The ranking after the dense route had its say, and what to report about it."""

    ranked: list[Candidate]
    routes: dict[str, str]
    notes: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


class DenseJoin:
    """Runs the dense route where ``choose_routes`` says so and fuses it with grep's
    ranking (RRF); the route (and its model) is created on first use and kept.

    ``routes = "dense"`` asked for is required: no extra or no usable index raises
    ``DenseError``. ``auto`` treats the same as a reason not to run, said in ``routes``;
    with ``load_model`` False (a one-shot CLI call) it also skips dense rather than load
    the model (seconds), and says how to get it.

    One lock serializes every use of the route (its index is updated in place), so a
    warm process can search from several threads and refresh the index in the background.
    """

    def __init__(self, repo: Path, settings: Settings, *, load_model: bool = True) -> None:
        self.repo = repo
        self.settings = settings
        self.load_model = load_model
        self._route = None  # greprag.routes.dense.DenseRoute
        self._lock = threading.Lock()

    def auto_skip(self, reason: str) -> tuple[str | None, bool]:
        """Why ``auto`` leaves dense out although the evidence asked for it (or None), and
        whether that is worth a note (a repo without an index is the usual case: not)."""
        from greprag.routes.dense import has_index

        try:
            if not has_index(self.repo, self.settings):
                return f"{reason}, but the repo has no index (greprag index)", False
        except DenseError as exc:
            return exc.reason, True
        if not self.load_model and (self._route is None or not self._route.embedder.loaded):
            return (
                f"{reason}, but a one-shot call skips the model load (seconds): "
                "pass --routes dense, or keep a process warm (greprag serve)"
            ), True
        return None, False

    @contextmanager
    def using(self) -> Iterator:  # Iterator[greprag.routes.dense.DenseRoute]
        """The route, held under the lock every use of it takes (docs mode's searches)."""
        with self._lock:
            yield self.route()

    def route(self):  # -> greprag.routes.dense.DenseRoute
        if self._route is None:
            from greprag.routes.dense import DenseRoute

            self._route = DenseRoute.from_settings(self.repo, self.settings)
        return self._route

    def usable(self) -> bool:
        """The extra is installed, the settings allow dense, and the repo has an index."""
        from greprag.routes.dense import dense_available, has_index

        s = self.settings
        try:
            return s.routes != "grep" and dense_available() and has_index(self.repo, s)
        except DenseError:  # a damaged index: not usable (status and retrieve say why)
            return False

    def freshness(self) -> dict[str, int] | None:
        """Files in the index, and files changed or deleted since (loads no model); None
        when the route is not ``usable``."""
        if not self.usable():
            return None
        with self._lock:
            index = self.route().index
            changes = index.changes()
            files = len(index.snapshot.files) if index.snapshot else 0
        return {"files": files, "changed": len(changes.changed), "deleted": len(changes.deleted)}

    def refresh(self, round_s: float = 2.0) -> int:
        """Bring the index up to date with the files (model loaded, index kept in memory),
        in rounds of about ``round_s`` seconds (longer while none fits) so searches
        interleave; the number of files updated or removed. Nothing happens when the
        route is not ``usable``."""
        if not self.usable():
            return 0
        done = 0
        bound = round_s
        while True:
            with self._lock:
                route = self.route()
                route.embedder.dim  # noqa: B018 (loads the model: searches find it warm)
                report = route.index.update(bound_s=bound)
            done += report.changed + report.deleted
            if not report.stale:
                return done
            if not (report.changed or report.deleted):
                bound *= 2  # nothing fitted (a large file, or a slow machine): longer rounds

    def join(self, request: RouteRequest, grep: RouteHits, ranked: list[Candidate]) -> Joined:
        """``ranked`` (grep's final ranking) with dense hits fused in, when dense runs."""
        from greprag.dense import INSTALL_HINT
        from greprag.routes.dense import dense_available

        s = self.settings
        installed = dense_available()
        if s.routes == "dense" and not installed:
            raise DenseError(f"--routes dense needs the dense extra: {INSTALL_HINT}")
        chosen, reason = choose_routes(
            s.routes,
            grep_candidates=grep.candidates,
            queries=request.plan.queries,
            ctx=request.ctx,
            dense_installed=installed,
        )
        if "dense" not in chosen:
            return Joined(ranked, {"dense": f"not run: {reason}"})
        if s.routes == "auto":
            skip, tell = self.auto_skip(reason)
            if skip:
                return Joined(ranked, {"dense": f"not run: {skip}"}, [f"dense: {skip}"] * tell)
        started = time.perf_counter()
        try:
            with self._lock:
                dense = self.route().search(request)
        except DenseError as exc:
            if s.routes == "dense":
                raise
            return Joined(ranked, {"dense": f"not run: {exc.reason}"}, [f"dense: {exc.reason}"])
        timings = {**dense.timings, "dense": (time.perf_counter() - started) * 1000}
        notes = [f"dense: {note}" for note in dense.notes]
        if "grep" not in chosen:
            routes = {"dense": reason, "grep": "ran, but only dense was asked for"}
            return Joined(dense.candidates, routes, notes, dense.skipped, timings)
        fused = fuse(
            {"grep": ranked, "dense": dense.candidates},
            weights={"grep": 1.0, "dense": s.dense_weight},
        )
        return Joined(fused, {"dense": reason}, notes, dense.skipped, timings)
