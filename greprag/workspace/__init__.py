"""Workspaces: one query over many repositories, in one process or on Ray.

``load_workspace`` reads a workspace file (``spec``); ``open_workspace`` opens it on its
backend; ``Workspace.run`` fans a ``RepoCall`` out and fuses the answers (``fuse``).
Nothing here imports Ray until a Ray backend is asked for (``on_ray``).
"""

from greprag.workspace.fuse import RepoAnswer, fuse
from greprag.workspace.shard import RepoCall, RetrieveCall, SearchCall, Shard
from greprag.workspace.spec import RayOptions, RepoSpec, WorkspaceSpec, load_workspace
from greprag.workspace.workspace import LocalBackend, Workspace, open_workspace, ray_options

__all__ = [
    "LocalBackend",
    "RayOptions",
    "RepoAnswer",
    "RepoCall",
    "RepoSpec",
    "RetrieveCall",
    "SearchCall",
    "Shard",
    "Workspace",
    "WorkspaceSpec",
    "fuse",
    "load_workspace",
    "open_workspace",
    "ray_options",
]
