"""The workspace file: which repositories one query searches, and how (TOML).

    [[repos]]
    path = "../payments"        # relative to this file; must be a folder
    name = "payments"           # optional, default: the folder's name; unique
    weight = 1.5                # optional, default 1.0: scales this repo's scores
    kind = "code"               # optional: code (default) or docs

    [ray]                       # optional: run the workspace on Ray
    address = "auto"            # an existing cluster; omit for a local Ray
    shards = 4                  # actors, each holding its repos warm (default: 2)
    timeout_s = 30              # a shard answering later is reported missing
    max_restarts = 3            # a dead actor is restarted this often

A workspace file is the user's own input, given on the command line: it may set the Ray
options (unlike a repository's ``.greprag.toml``). Every problem is one line naming the
file and the entry.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from greprag.config import read_toml
from greprag.errors import ConfigError, WorkspaceError

__all__ = ["KINDS", "RayOptions", "RepoSpec", "WorkspaceSpec", "load_workspace"]

KINDS = ("code", "docs")
RepoKind = Literal["code", "docs"]
MAX_REPOS = 100_000
_REPO_KEYS = frozenset({"path", "name", "weight", "kind"})
_RAY_KEYS = frozenset({"address", "shards", "timeout_s", "max_restarts", "cpus_per_shard"})


@dataclass(frozen=True)
class RepoSpec:
    """One repository of a workspace (``path`` resolved, a folder)."""

    path: Path
    name: str
    weight: float = 1.0
    kind: RepoKind = "code"


@dataclass(frozen=True)
class RayOptions:
    """How the workspace runs on Ray. ``address`` None: a local Ray for this process."""

    address: str | None = None
    shards: int = 2
    timeout_s: float = 30.0
    max_restarts: int = 3
    cpus_per_shard: float = 1.0


@dataclass(frozen=True)
class WorkspaceSpec:
    """The repositories of a workspace, in file order, and its Ray options (if any)."""

    repos: tuple[RepoSpec, ...]
    ray: RayOptions | None = None
    source: Path | None = None

    @classmethod
    def of_paths(cls, paths: list[str | Path]) -> WorkspaceSpec:
        """A workspace of plain folders (names from the folders), as ``--repo`` gives."""
        tables = [{"path": str(Path(p).expanduser().resolve())} for p in paths]
        return cls(tuple(_repos(tables, Path.cwd(), "--repo")))


def _fail(where: str, message: str) -> WorkspaceError:
    return WorkspaceError(f"{where}: {message}")


def _number(where: str, key: str, value: Any, *, integer: bool = False, zero: bool = False):
    """A positive finite number (an int when ``integer``; 0 too when ``zero``), else one
    line."""
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or value < 0:
        ok_type = False
    if not ok_type or (value == 0 and not zero):
        wanted = "a positive integer" if integer else "a positive number"
        wanted = f"0 or {wanted}" if zero else wanted
        raise _fail(where, f"{key} must be {wanted}, not {value!r}")
    return value


def _table(where: str, table: Any, known: frozenset[str]) -> None:
    """A TOML table holding only ``known`` keys, else one line."""
    if not isinstance(table, dict):
        raise WorkspaceError(f"{where} must be a table")
    unknown = sorted(set(table) - known)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")


def _repos(tables: Any, base: Path, label: str) -> list[RepoSpec]:
    if not isinstance(tables, list) or not tables:
        raise _fail(label, "list at least one repository as a [[repos]] table with a path")
    if len(tables) > MAX_REPOS:
        raise _fail(label, f"more than {MAX_REPOS} repositories")
    repos: list[RepoSpec] = []
    names: dict[str, int] = {}
    for index, table in enumerate(tables, 1):
        where = f"{label}: repos[{index}]"
        _table(where, table, _REPO_KEYS)
        given = table.get("path")
        if not isinstance(given, str) or not given.strip():
            raise WorkspaceError(f"{where}: path must be a folder name, not {given!r}")
        path = Path(os.path.realpath(base / Path(given).expanduser()))
        if not path.is_dir():
            raise WorkspaceError(f"{where}: repository not found: {given}")
        name = table.get("name", path.name)
        if not isinstance(name, str) or not name.strip() or any(c in name for c in "\n\r\0"):
            raise WorkspaceError(f"{where}: name must be a one-line text, not {name!r}")
        if name in names:
            raise WorkspaceError(f"{where}: the name {name!r} is taken by repos[{names[name]}]")
        names[name] = index
        weight = float(_number(where, "weight", table.get("weight", 1.0)))
        kind = table.get("kind", "code")
        if kind not in KINDS:
            raise WorkspaceError(f"{where}: kind must be code or docs, not {kind!r}")
        repos.append(RepoSpec(path, name, weight, kind))
    return repos


def _ray(table: Any, label: str) -> RayOptions:
    where = f"{label}: [ray]"
    _table(where, table, _RAY_KEYS)
    address = table.get("address")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise WorkspaceError(f"{where}: address must be a text like 'auto' or 'host:6379'")
    defaults = RayOptions()
    return RayOptions(
        address=address,
        shards=int(_number(where, "shards", table.get("shards", defaults.shards), integer=True)),
        timeout_s=float(_number(where, "timeout_s", table.get("timeout_s", defaults.timeout_s))),
        max_restarts=int(
            _number(
                where,
                "max_restarts",
                table.get("max_restarts", defaults.max_restarts),
                integer=True,
                zero=True,
            )
        ),
        cpus_per_shard=float(
            _number(where, "cpus_per_shard", table.get("cpus_per_shard", defaults.cpus_per_shard))
        ),
    )


def load_workspace(path: str | Path) -> WorkspaceSpec:
    """The workspace described by the TOML file at ``path`` (paths relative to its folder)."""
    file = Path(path).expanduser()
    label = str(file)
    try:
        data = read_toml(file, "workspace file")
    except WorkspaceError:
        raise
    except ConfigError as exc:
        raise WorkspaceError(exc.reason) from None
    unknown = sorted(set(data) - {"repos", "ray"})
    if unknown:
        raise _fail(label, f"unknown key {unknown[0]!r} (known: repos, ray)")
    base = file.resolve().parent
    ray = _ray(data["ray"], label) if "ray" in data else None
    return WorkspaceSpec(tuple(_repos(data.get("repos"), base, label)), ray, file.resolve())
