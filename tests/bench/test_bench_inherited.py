"""The inherited-member cursors: which calls they are drawn from, and a real retrieval's
answer."""

from __future__ import annotations

from pathlib import Path

from bench.inherited import measure, sample
from tests.conftest import written_repo

FILES = {
    "kit/__init__.py": "",
    "kit/core.py": "class Core:\n    def describe_all(self):\n        return 0\n",
    "kit/middle.py": (
        "from kit.core import Core\n"
        "\n"
        "\n"
        "class Middle(Core):\n"
        "    def step(self):\n"
        "        return 1\n"
    ),
    "kit/leaf.py": (
        "from kit.middle import Middle\n"
        "\n"
        "\n"
        "class Leaf(Middle):\n"
        "    def run(self):\n"
        "        self.step()\n"
        "        return self.describe_all()\n"
    ),
}


def _repo(root: Path) -> Path:
    return written_repo(root, FILES)


def test_cursors_are_members_defined_beyond_the_direct_bases(tmp_path: Path):
    """``self.step()`` is defined in the direct base's file: not drawn."""
    cursors = sample(_repo(tmp_path), 5, seed=0)
    assert [(c.path, c.line, c.column, c.name, c.definition) for c in cursors] == [
        ("kit/leaf.py", 7, 20, "describe_all", ("kit/core.py", 2))
    ]


def test_a_retrieval_finds_the_inherited_definition(tmp_path: Path):
    row = measure(_repo(tmp_path), 5, seed=0)
    assert row["cursors"] == 1 and row["found"] == 1, row
