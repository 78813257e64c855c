"""``greprag index`` and ``greprag status``: build, update and inspect the dense index."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

RepoOpt = Annotated[Path, typer.Option("--repo", "-r", help="Repository root.")]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", help="sentence-transformers model name or path (default: bundled MiniLM)."
    ),
]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Index cache root (default: $GREPRAG_CACHE_DIR/dense or ~/.cache/greprag/dense).",
    ),
]


BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend", help="int8 (default on CPU, 2.9x faster) or fp32; each keeps its own index."
    ),
]


def _open(
    repo: Path, model: str | None, cache_dir: Path | None, backend: str | None = None
):  # -> DenseIndex
    from greprag.config import load_settings
    from greprag.dense.embed import Embedder
    from greprag.dense.index import DenseIndex
    from greprag.errors import ConfigError
    from greprag.routes.dense import dense_available

    if not dense_available():
        typer.echo(
            "greprag: the dense extra is not installed (pip install 'greprag[dense]')", err=True
        )
        raise typer.Exit(2)
    if not repo.is_dir():
        typer.echo(f"greprag: not a directory: {repo}", err=True)
        raise typer.Exit(2)
    try:
        s = load_settings(
            repo,
            dense_model=model,
            dense_backend=backend,
            dense_cache_dir=str(cache_dir) if cache_dir else None,
        )
        embedder = Embedder(s.dense_model or None, backend=s.dense_backend or None)
    except (ConfigError, ValueError) as exc:
        typer.echo(f"greprag: {exc}", err=True)
        raise typer.Exit(2) from None
    return DenseIndex(repo, embedder=embedder, cache_dir=s.dense_cache(), rg_path=s.rg_path or None)


def index_command(
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    cache_dir: CacheOpt = None,
    backend: BackendOpt = None,
) -> None:
    """Build or update the dense index of a repository (only changed files are embedded)."""
    index = _open(repo, model, cache_dir, backend)
    started = time.perf_counter()
    changes = index.changes()
    total = len(changes.changed)
    typer.echo(f"{total} file(s) to (re)index, {len(changes.deleted)} removed")
    with typer.progressbar(length=max(total, 1), label="indexing", file=None) as bar:
        shown = 0

        def progress(done: int, _total: int) -> None:
            nonlocal shown
            bar.update(done - shown)
            shown = done

        report = index.update(progress=progress)
    rows = len(index.snapshot.rows) if index.snapshot else 0
    load = f", model load {index.embedder.load_s:.1f} s" if index.embedder.load_s else ""
    typer.echo(
        f"indexed {report.changed} file(s): {report.embedded} chunk(s) embedded, "
        f"{report.reused} reused, {report.deleted} file(s) removed; {rows} chunks in total; "
        f"{time.perf_counter() - started:.1f} s{load}"
    )
    typer.echo(f"index: {index.path}")


def status_command(
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    cache_dir: CacheOpt = None,
    backend: BackendOpt = None,
) -> None:
    """Show the dense index's freshness, size and model (loads no model)."""
    index = _open(repo, model, cache_dir, backend)
    changes = index.changes()
    snapshot = index.snapshot
    if snapshot is None:
        typer.echo(
            f"no dense index for {index.repo} (model {index.embedder.name}); "
            f"run `greprag index --repo {repo}`"
        )
        raise typer.Exit(1)
    size = index.path.stat().st_size
    kind = "approximate (IVF)" if index.approximate else "exact (flat)"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snapshot.updated_at))
    typer.echo(f"repo:     {index.repo}")
    typer.echo(f"model:    {snapshot.model} (dim {snapshot.dim})")
    typer.echo(f"index:    {index.path} ({size / 1e6:.1f} MB, {kind})")
    typer.echo(f"content:  {len(snapshot.files)} files, {len(snapshot.rows)} chunks")
    typer.echo(f"updated:  {stamp}")
    typer.echo(
        f"changed since index: {len(changes.changed)} file(s), {len(changes.deleted)} deleted"
    )
