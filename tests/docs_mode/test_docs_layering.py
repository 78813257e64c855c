"""Layering: greprag loads docs_mode only inside the functions that need it."""

from __future__ import annotations

import ast
from pathlib import Path

import greprag


def test_greprag_imports_docs_mode_only_inside_functions():
    package = Path(greprag.__file__).parent
    users = set()
    for file in sorted(package.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        top_level = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module and module.startswith("docs_mode"):
                assert node not in top_level, f"{file.name} imports {module} at the top"
                users.add(file.relative_to(package).as_posix())
    # the search and ask, the dense chunker, the rendering of an answer, ask over a workspace
    assert users == {"pipeline.py", "dense/chunks.py", "render.py", "cli/docs.py"}
