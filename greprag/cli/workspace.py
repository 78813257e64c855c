"""What the commands that take a query share for ``--workspace``: the options, opening the
workspace on its backend (``--ray``, ``--ray-address`` or the file's ``[ray]``), running
one query over it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from greprag.cli.common import run

__all__ = [
    "RayAddressOpt",
    "RayOpt",
    "WorkspaceOpt",
    "index_workspace",
    "workspace_paths",
    "workspace_result",
]

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        help="A workspace file (TOML: [[repos]] with path, name, weight, kind): search all "
        "its repositories as one, each block naming its repo.",
        show_default=False,
    ),
]
RayOpt = Annotated[
    bool,
    typer.Option("--ray", help="Run the --workspace on a local Ray (the ray extra)."),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option("--ray-address", help="Run the --workspace on the Ray cluster at this address."),
]


def workspace_paths(file: Path) -> list[Path]:
    """The repository folders of the workspace file (what ``serve``/``mcp`` pool)."""
    from greprag.workspace import load_workspace

    return [repo.path for repo in run(lambda: load_workspace(file)).repos]


def workspace_result(
    file: Path,
    call: Any,  # a greprag.workspace.RepoCall
    *,
    budget: int | None,
    ray: bool,
    ray_address: str | None,
    **settings: Any,
):  # -> Result
    """``call`` over the workspace in ``file``, fused; one line and an exit code on error."""
    from greprag.workspace import load_workspace, open_workspace

    def query():
        spec = load_workspace(file)
        with open_workspace(spec, ray=ray, ray_address=ray_address, **settings) as workspace:
            return workspace.run(call, budget=budget)

    return run(query)


def index_workspace(file: Path, *, ray: bool, ray_address: str | None, **settings: Any) -> None:
    """Build or update the dense index of every repo of the workspace in ``file``: as Ray
    tasks (one per shard) when Ray is asked for, else here; one line per repo."""
    from greprag.workspace import load_workspace, ray_options
    from greprag.workspace.bulk import index_repos

    spec = run(lambda: load_workspace(file))
    options = ray_options(spec, ray, ray_address)
    given = {k: v for k, v in settings.items() if v is not None}
    if options is None:
        reports = run(lambda: index_repos([r.path for r in spec.repos], given))
    else:
        from greprag.workspace.on_ray import bulk_index

        reports = run(lambda: bulk_index(spec, options, given))
    for repo, report in zip(spec.repos, reports, strict=True):
        typer.echo(
            f"{repo.name}: {report.files} file(s) (re)indexed, {report.embedded} chunk(s) "
            f"embedded, {report.chunks} in total; {report.seconds:.1f} s"
        )
