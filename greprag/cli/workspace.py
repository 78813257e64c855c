"""What the commands that take a query share for ``--workspace``: the options, opening the
workspace on its backend (``--ray``, ``--ray-address`` or the file's ``[ray]``), running
one query over it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from greprag.cli.common import run

__all__ = ["RayAddressOpt", "RayOpt", "WorkspaceOpt", "workspace_paths", "workspace_result"]

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
