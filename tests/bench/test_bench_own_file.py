"""The own-file cursors: which calls they are drawn from, and a real retrieval's answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.own_file import MIN_BELOW, cursors_in, measure

FILLER = ["    def step(self):\n", *(f"        x{i} = {i}\n" for i in range(MIN_BELOW))]
SOURCE = (
    "class Runner:\n"
    "    def run(self):\n"
    "        self.finish_up(1)\n"
    "        self.step()\n"
    "\n"
    "    @classmethod\n"
    "    def make(cls):\n"
    "        return cls.build_one()\n"
    "\n" + "".join(FILLER) + "\n"
    "    def finish_up(self, code):\n"
    "        return code\n"
    "\n"
    "    @classmethod\n"
    "    def build_one(cls):\n"
    "        return cls()\n"
    "\n"
    "\n"
    "def main():\n"
    "    return helper_task(2)\n"
    "\n" + "\n" * MIN_BELOW + "def helper_task(n):\n    return n\n"
)


def test_cursors_are_calls_whose_only_definition_lies_far_below():
    lines = SOURCE.split("\n")
    found = {
        kind: [(c.line, c.column, c.name) for c in cursors_in("m.py", lines, "python", kind)]
        for kind in ("self", "cls", "call")
    }
    assert found["self"] == [(3, 13, "finish_up")]  # step is defined too near
    assert found["cls"] == [(8, 19, "build_one")]
    call_line = lines.index("    return helper_task(2)") + 1
    assert found["call"] == [(call_line, 13, "helper_task")]  # two letters typed
    assert list(cursors_in("M.java", lines, "java", "cls")) == []


def test_a_retrieval_finds_the_definitions_below_the_cursor(tmp_path: Path):
    (tmp_path / "m.py").write_text(SOURCE)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "m.py"], check=True)
    for kind in ("self", "cls", "call"):
        row = measure(tmp_path, "python", kind, 5, seed=0)
        assert row["cursors"] == 1 and row["found"] == 1, (kind, row)
