"""Import-time guard: the package and the CLI's help load none of the heavy dependencies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "litellm",
    "torch",
    "faiss",
    "sentence_transformers",
    "transformers",
    "tree_sitter",
    "tiktoken",
    "numpy",
    "docs_mode",
    "lxml",
    "mcp",
    "starlette",
    "uvicorn",
    "ray",
)

_PROBE = """
import sys
{body}
print(" ".join(m for m in {heavy!r} if m in sys.modules))
"""


def _loaded(body: str) -> list[str]:
    code = _PROBE.format(body=body, heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return proc.stdout.split()


def test_import_greprag_loads_no_heavy_dependency():
    assert _loaded("import greprag") == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["retrieve", "--help"],
        ["queries", "--help"],
        ["mcp", "--help"],
        ["serve", "--help"],
        ["search", "--help"],
    ],
)
def test_cli_help_loads_no_heavy_dependency(argv):
    body = (
        "import contextlib, io\n"
        "from greprag.cli import app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    app({argv!r}, standalone_mode=False)\n"
    )
    assert _loaded(body) == []


def test_a_workspace_without_ray_never_imports_it(tmp_path):
    """Ray is an optional extra: opening and querying a workspace in one process (and the
    workspace options' help) loads none of it."""
    repo = Path(__file__).parent / "fixtures" / "py_pipeline"
    spec = tmp_path / "team.toml"
    spec.write_text(f'[[repos]]\npath = "{repo}"\n')
    body = (
        "from greprag.workspace import load_workspace, open_workspace\n"
        f"ws = open_workspace(load_workspace({str(spec)!r}), load_dense=False)\n"
        "assert ws.retrieve('loader = DataLoader(path)\\nloader.', budget=500).blocks\n"
    )
    assert "ray" not in _loaded(body)


def test_a_one_shot_retrieval_loads_no_numpy_nor_models():
    """A CLI-like retrieval (no worker, so no word index) loads tiktoken to count tokens
    and nothing heavier: the similar route's index imports numpy only in its worker."""
    repo = Path(__file__).parent / "fixtures" / "py_pipeline"
    body = (
        "from greprag import Retriever\n"
        f"r = Retriever({str(repo)!r})\n"
        "assert r.retrieve(left_context='loader = DataLoader(path)\\nloader.', "
        "language='python').blocks\n"
    )
    assert _loaded(body) == ["tiktoken"]


def test_the_probe_sees_a_heavy_import():
    """The guard can fail: importing one of the listed modules is detected."""
    assert _loaded("import numpy") == ["numpy"]
