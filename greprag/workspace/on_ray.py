"""A workspace on Ray: shards of repositories on actors, a coordinator fusing their answers.

Each actor is a ``Shard`` (the same class the single-process workspace uses) holding its
repos warm: file lists, syntax caches, dense index shards. A query fans out to every
actor; answers arrive as each repo's scored blocks and are fused in the caller exactly as
in one process. An actor that dies mid-query, or answers later than ``timeout_s``, leaves
a partial answer naming its repositories, never a hang; Ray restarts a dead actor
(``max_restarts``) and the next query reaches the new one. Bulk dense indexing runs as
Ray tasks, one per shard. ``ray`` is the optional ``ray`` extra, imported only here.
"""

from __future__ import annotations

import socket
import time
from typing import Any

from greprag.errors import ClusterError
from greprag.workspace.bulk import IndexReport, index_repos
from greprag.workspace.fuse import RepoAnswer
from greprag.workspace.shard import RepoCall, Shard
from greprag.workspace.spec import RayOptions, RepoSpec, WorkspaceSpec

__all__ = ["RayBackend", "bulk_index", "shard_repos"]

INSTALL_HINT = "pip install 'greprag[ray]' (or pip install ray)"
CONNECT_TIMEOUT_S = 5.0  # a cluster's address must accept a connection this soon
OPEN_TIMEOUT_S = 600.0  # opening a shard reads file lists; a cluster may start slowly


def _ray():  # -> the ray module
    try:
        import ray
    except ImportError:
        raise ClusterError(f"Ray is not installed: {INSTALL_HINT}") from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast, in one line, on a ``host:port`` (or ``ray://host:port``) nothing listens
    on: Ray itself would keep retrying for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local": Ray resolves those
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {reason}") from None


def _connect(options: RayOptions) -> bool:
    """Ray for this process (a local one, or the cluster at ``options.address``); True
    when this call started it (and closing should stop it)."""
    ray = _ray()
    if ray.is_initialized():
        return False
    if options.address:
        _check_reachable(options.address)
    try:
        ray.init(
            address=options.address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = options.address or "a local Ray"
        raise ClusterError(f"cannot start or reach {where}: {str(exc).splitlines()[0]}") from None
    return True


def shard_repos(spec: WorkspaceSpec, shards: int) -> list[list[tuple[int, RepoSpec]]]:
    """The repos dealt round-robin into at most ``shards`` non-empty shards."""
    count = max(1, min(shards, len(spec.repos)))
    return [list(enumerate(spec.repos))[i::count] for i in range(count)]


class RayBackend:
    """``spec``'s repos on ``options.shards`` actors of ``shard_class`` (a ``Shard``)."""

    def __init__(
        self,
        spec: WorkspaceSpec,
        options: RayOptions,
        settings: dict[str, Any],
        *,
        load_dense: bool = True,
        shard_class: type[Shard] = Shard,
    ) -> None:
        ray = _ray()
        self.options = options
        self.started = _connect(options)
        self.shards = shard_repos(spec, options.shards)
        actor = ray.remote(
            num_cpus=options.cpus_per_shard,
            max_restarts=options.max_restarts,
            max_task_retries=0,  # a query is not retried: its answer would come too late
        )(shard_class)
        self.actors = [
            actor.remote(repos, settings, load_dense=load_dense) for repos in self.shards
        ]
        try:
            self.pids = self.wait_ready(OPEN_TIMEOUT_S)
        except ClusterError:
            self.close()
            raise

    def wait_ready(self, timeout_s: float) -> list[int]:
        """Wait until every actor answers (a restarted one has opened its repos again);
        their process ids. ``ClusterError`` after ``timeout_s``."""
        ray = _ray()
        from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                return ray.get([a.pid.remote() for a in self.actors], timeout=max(left, 0.01))
            except (RayActorError, ActorUnavailableError):
                if left <= 0:
                    break
                time.sleep(0.2)  # restarting: ask again
            except GetTimeoutError:
                break
        raise ClusterError(f"the workspace's shards were not ready within {timeout_s:.0f} s")

    def _missing(self, shard: int, reason: str) -> list[RepoAnswer]:
        label = f"shard {shard + 1}/{len(self.shards)} {reason}"
        return [RepoAnswer(i, r.name, r.weight, error=label) for i, r in self.shards[shard]]

    def answer(self, call: RepoCall, budget: int) -> list[RepoAnswer]:
        """Every shard's answers; a shard that died or is late gives labelled gaps."""
        ray = _ray()
        from ray.exceptions import ActorUnavailableError, RayActorError, RayTaskError

        started = time.monotonic()
        refs = [actor.answer.remote(call, budget) for actor in self.actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=self.options.timeout_s)
        done = set(ready)
        answers: list[RepoAnswer] = []
        for shard, ref in enumerate(refs):
            if ref not in done:
                waited = time.monotonic() - started
                answers += self._missing(shard, f"did not answer within {waited:.1f} s")
                continue
            try:
                answers += ray.get(ref)
            except (RayActorError, ActorUnavailableError):
                answers += self._missing(shard, "failed mid-query (its actor died; restarting)")
            except RayTaskError as exc:  # not a GrepRAG error (those are answers): a bug
                raise exc.as_instanceof_cause() from None
        return answers

    def close(self) -> None:
        """Stop the actors, and the local Ray this backend started."""
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self.actors = []
        if self.started:
            ray.shutdown()


def bulk_index(
    spec: WorkspaceSpec, options: RayOptions, settings: dict[str, Any]
) -> list[IndexReport]:
    """Build or update every repo's dense index as Ray tasks, one per shard (each loads
    the embedding model once); the reports in workspace order."""
    ray = _ray()
    started = _connect(options)
    try:
        task = ray.remote(num_cpus=options.cpus_per_shard)(index_repos)
        shards = shard_repos(spec, options.shards)
        refs = [task.remote([r.path for _, r in shard], settings) for shard in shards]
        order = {r.path: i for i, r in enumerate(spec.repos)}
        reports = [report for batch in ray.get(refs) for report in batch]
        return sorted(reports, key=lambda report: order[report.repo])
    finally:
        if started:
            ray.shutdown()
