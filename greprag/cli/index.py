"""``greprag index`` and ``greprag status``: build, update and inspect the dense index."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from greprag.cli.common import CacheOpt, RepoOpt, choice, fail, resolve_target, run
from greprag.cli.workspace import RayAddressOpt, RayOpt, WorkspaceOpt, index_workspace

__all__ = ["INDEX_HELP", "STATUS_HELP", "index_command", "status_command"]

INDEX_HELP = (
    "Build or update the dense index of a repository (only changed files are embedded).\n\n"
    "A build saves checkpoints as it goes: interrupted, the next run embeds only what is "
    "missing. A damaged or outdated index is rebuilt. Needs the dense extra.\n\n"
    "Examples:\n\n"
    "  greprag index                      # the repository around the working directory\n\n"
    "  greprag index --repo ~/src/app --cache-dir /tmp/greprag-cache\n\n"
    "  greprag index --workspace team.toml --ray   # every repo, as Ray tasks (one per shard)"
)
STATUS_HELP = (
    "Show the dense index's freshness, size and model (loads no model, writes nothing).\n\n"
    "Exits 1 when the repository has no usable index (none yet, damaged or outdated).\n\n"
    "Examples:\n\n"
    "  greprag status\n\n"
    "  greprag status --repo ~/src/app || greprag index --repo ~/src/app"
)

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", help="sentence-transformers model name or path (default: bundled MiniLM)."
    ),
]


class BackendChoice(StrEnum):
    """``--backend`` values (``greprag.dense.naming.BACKENDS``)."""

    int8 = "int8"
    fp32 = "fp32"


BackendOpt = Annotated[
    BackendChoice | None,
    typer.Option(
        "--backend", help="int8 (default on CPU, 2.9x faster) or fp32; each keeps its own index."
    ),
]


def _open(
    repo: Path | None, model: str | None, cache_dir: Path | None, backend: BackendChoice | None
):  # -> DenseIndex
    """The repo's DenseIndex (no model loaded), or one line and the documented exit code."""
    from greprag.config import load_settings

    root, _ = resolve_target(repo, None)
    if not root.is_dir():
        fail(f"repository not found: {root}")
    _require_dense()

    def build():
        from greprag.dense.embed import Embedder
        from greprag.dense.index import DenseIndex

        s = load_settings(
            root,
            dense_model=model,
            dense_backend=choice(backend),
            cache_dir=str(cache_dir) if cache_dir else None,
        )
        embedder = Embedder(s.dense_model or None, backend=s.dense_backend or None)
        return DenseIndex(
            root, embedder=embedder, cache_dir=s.dense_cache(), rg_path=s.rg_path or None
        )

    return run(build)


def _require_dense() -> None:
    """The dense extra, or one line and exit 3."""
    from greprag.dense import INSTALL_HINT
    from greprag.routes.dense import dense_available

    if not dense_available():
        fail(f"the dense extra is not installed: {INSTALL_HINT}", 3)


def index_command(
    repo: RepoOpt = None,
    model: ModelOpt = None,
    cache_dir: CacheOpt = None,
    backend: BackendOpt = None,
    workspace: WorkspaceOpt = None,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
) -> None:
    """Build or update the dense index of a repository (only changed files are embedded)."""
    if workspace is not None:  # every repo of it, as Ray tasks with --ray
        _require_dense()
        index_workspace(
            workspace,
            ray=ray,
            ray_address=ray_address,
            dense_model=model,
            dense_backend=choice(backend),
            cache_dir=str(cache_dir) if cache_dir else None,
        )
        return
    index = _open(repo, model, cache_dir, backend)
    started = time.perf_counter()
    changes = run(index.changes)
    if index.problem:
        typer.echo(f"greprag: note: {index.problem}", err=True)
    total = len(changes.changed)
    typer.echo(f"{total} file(s) to (re)index, {len(changes.deleted)} removed")
    with typer.progressbar(length=max(total, 1), label="indexing", file=None) as bar:
        shown = 0

        def progress(done: int, _total: int) -> None:
            nonlocal shown
            bar.update(done - shown)
            shown = done

        report = run(lambda: index.update(progress=progress))
    rows = len(index.snapshot.rows) if index.snapshot else 0
    load = f", model load {index.embedder.load_s:.1f} s" if index.embedder.load_s else ""
    if report.repaired:
        typer.echo(f"rebuilt the index it replaced ({report.repaired.split(':')[0]})")
    typer.echo(
        f"indexed {report.changed} file(s): {report.embedded} chunk(s) embedded, "
        f"{report.reused} reused, {report.deleted} file(s) removed; {rows} chunks in total; "
        f"{time.perf_counter() - started:.1f} s{load}"
    )
    typer.echo(f"index: {index.path}")


def status_command(
    repo: RepoOpt = None,
    model: ModelOpt = None,
    cache_dir: CacheOpt = None,
    backend: BackendOpt = None,
) -> None:
    """Show the dense index's freshness, size and model (loads no model)."""
    index = _open(repo, model, cache_dir, backend)
    changes = run(index.changes)
    snapshot = index.snapshot
    if snapshot is None:
        reason = index.problem or f"no dense index for {index.repo} (model {index.embedder.name})"
        typer.echo(f"{reason}; run `greprag index --repo {index.repo}`")
        raise typer.Exit(1)
    try:
        size = f"{index.path.stat().st_size / 1e6:.1f} MB, "
    except OSError:  # replaced or removed since it was read
        size = ""
    kind = "approximate (IVF)" if index.approximate else "exact (flat)"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snapshot.updated_at))
    typer.echo(f"repo:     {index.repo}")
    typer.echo(f"model:    {snapshot.model} (dim {snapshot.dim})")
    typer.echo(f"index:    {index.path} ({size}{kind})")
    typer.echo(f"content:  {len(snapshot.files)} files, {len(snapshot.rows)} chunks")
    typer.echo(f"updated:  {stamp}")
    typer.echo(
        f"changed since index: {len(changes.changed)} file(s), {len(changes.deleted)} deleted"
    )
