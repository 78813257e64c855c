"""Determinism: the same cursor on the same files gives the same result, byte for byte,
across processes with different hash seeds and across cold and warm retrievers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from greprag import Retriever
from tests.reliability.cases import case
from tests.reliability.conftest import cli, cli_env

AREA = "determinism"

# Every 9th line of every source file, cursor mid-line: ~100 cursors over both fixtures.
SCRIPT = r"""
import json, sys
from pathlib import Path
from greprag import Retriever
out = {}
for root in sys.argv[1:]:
    repo = Path(root)
    retriever = Retriever(repo, routes="grep")
    for path in sorted(p for p in repo.rglob("*") if p.suffix in (".py", ".java")):
        rel = path.relative_to(repo).as_posix()
        if rel.startswith("build/"):
            continue
        lines = path.read_text().split("\n")
        for number in range(3, len(lines), 9):
            column = len(lines[number - 1]) // 2
            res = retriever.retrieve(file=rel, line=number, column=column)
            data = res.to_dict()
            data.pop("timings_ms")
            data["explain"] = res.explain.to_dict() if res.explain else None
            out[f"{rel}:{number}:{column}"] = data
print(json.dumps(out, sort_keys=True))
"""


def _runs(seeds: tuple[str, ...], *repos: Path) -> list[str]:
    """The script's output in one process per seed, run side by side."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, *map(str, repos)],
            env=cli_env(PYTHONHASHSEED=seed),
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in seeds
    ]
    outputs = [proc.communicate(timeout=300)[0] for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    return outputs


@case(
    AREA,
    "~100 cursors over the Python and Java fixtures, in processes with PYTHONHASHSEED 0, 1, 2",
    "identical results (blocks, context, queries, skips, drops, explain), byte for byte",
)
def test_results_do_not_depend_on_the_hash_seed(py_repo, java_repo):
    runs = _runs(("0", "1", "2"), py_repo, java_repo)
    assert len(json.loads(runs[0])) > 80
    assert runs[0] == runs[1] == runs[2]


@case(
    AREA,
    "the same cursor through a cold Retriever, a warm one (listed files) and again",
    "identical results each time",
)
def test_cold_and_warm_retrievers_agree(py_repo):
    warm = Retriever(py_repo, routes="grep", file_list_ttl=600)
    for path, number in (("pipeline/processor.py", 17), ("jobs/runner.py", 14), ("cli/main.py", 9)):
        results = [
            Retriever(py_repo, routes="grep").retrieve(file=path, line=number),
            warm.retrieve(file=path, line=number),
            warm.retrieve(file=path, line=number),
        ]
        shapes = []
        for res in results:
            data = res.to_dict()
            data.pop("timings_ms")
            shapes.append(json.dumps(data, sort_keys=True))
        assert shapes[0] == shapes[1] == shapes[2], path


@case(
    AREA,
    "greprag retrieve's stdout for the same cursor with PYTHONHASHSEED 3 and 4",
    "the same bytes",
)
def test_cli_output_is_byte_identical(py_repo):
    args = ["retrieve", "--repo", str(py_repo), "--file", "pipeline/processor.py", "--line", "17"]
    outputs = [cli(*args, env=cli_env(PYTHONHASHSEED=seed)).stdout for seed in ("3", "4")]
    assert outputs[0] == outputs[1] and outputs[0]
