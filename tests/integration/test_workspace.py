"""Workspaces in one process: each repo's own answer, weighted and fused; the CLI's
``--workspace`` (JSON ``repo`` per block, one-line errors) and ``serve``'s pool over it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from greprag.pipeline import Retriever
from greprag.workspace import load_workspace, open_workspace
from tests.conftest import FIXTURES
from tests.integration.test_cli import _env, greprag

LEFT_CONTEXT = (
    "class Runner:\n"
    "    def run(self, config):\n"
    "        loader = DataLoader(config.data_path)\n"
    "        order = repository.findById(request.getOrderId())\n"
    "        batch = loader."
)


def _workspace_file(tmp_path, py_repo, java_repo, java_weight: float = 1.0):
    path = tmp_path / "team.toml"
    path.write_text(
        f'[[repos]]\npath = "{py_repo}"\nname = "pipeline"\n\n'
        f'[[repos]]\npath = "{java_repo}"\nname = "orders"\nweight = {java_weight}\n'
    )
    return path


def test_the_fused_ranking_is_each_repos_answer_weighted(tmp_path, py_repo, java_repo):
    spec = load_workspace(_workspace_file(tmp_path, py_repo, java_repo, java_weight=0.5))
    with open_workspace(spec, load_dense=False) as workspace:
        fused = workspace.retrieve(LEFT_CONTEXT, budget=2000)
    alone = {
        name: Retriever(path, load_dense=False).retrieve(left_context=LEFT_CONTEXT, budget=2000)
        for name, path in (("pipeline", py_repo), ("orders", java_repo))
    }
    weights = {"pipeline": 1.0, "orders": 0.5}
    assert {b.repo for b in fused.blocks} == {"pipeline", "orders"}
    for block in fused.blocks:
        own = [
            b
            for b in alone[block.repo].blocks
            if (b.path, b.start_line) == (block.path, block.start_line)
        ]
        assert own and own[0].text == block.text
        assert block.score == pytest.approx(own[0].score * weights[block.repo])
    scores = [b.score for b in fused.blocks]
    assert scores == sorted(scores, reverse=True)
    assert fused.tokens <= 2000 and fused.missing == []


def test_a_weight_moves_a_repo_up_the_ranking(tmp_path, py_repo, java_repo):
    spec = load_workspace(_workspace_file(tmp_path, py_repo, java_repo, java_weight=5.0))
    with open_workspace(spec, load_dense=False) as workspace:
        fused = workspace.retrieve(LEFT_CONTEXT, budget=2000)
    first_python = next(i for i, b in enumerate(fused.blocks) if b.repo == "pipeline")
    assert all(b.repo == "orders" for b in fused.blocks[:first_python])
    assert first_python >= 1


def test_cli_workspace_json_carries_the_repo_of_each_block(tmp_path, py_repo, java_repo):
    workspace = _workspace_file(tmp_path, py_repo, java_repo)
    proc = greprag_stdin(LEFT_CONTEXT, "--workspace", str(workspace), "--budget", "1500")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["blocks"] and {b["repo"] for b in payload["blocks"]} == {"pipeline", "orders"}
    assert payload["missing"] == []
    assert (
        f"# [{payload['blocks'][0]['repo']}] {payload['blocks'][0]['path']}:"
        in (payload["context"])
    )


def greprag_stdin(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``greprag retrieve --stdin --json ARGS`` with ``text`` on stdin."""
    return subprocess.run(
        [sys.executable, "-m", "greprag", "retrieve", "--stdin", "--json", *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workspace", "{missing}"], "is not a readable file"),
        (["--workspace", "{bad}"], "repos[1]: repository not found: nowhere"),
    ],
)
def test_cli_workspace_mistakes_are_one_line(tmp_path, args, message):
    (tmp_path / "bad.toml").write_text('[[repos]]\npath = "nowhere"\n')
    paths = {"missing": str(tmp_path / "absent.toml"), "bad": str(tmp_path / "bad.toml")}
    proc = greprag_stdin("x = load(", *[a.format(**paths) for a in args])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
    assert proc.stderr.startswith("greprag: error: ")


def test_cli_workspace_wants_the_left_context_on_stdin(tmp_path, py_repo, java_repo):
    workspace = _workspace_file(tmp_path, py_repo, java_repo)
    proc = greprag("retrieve", "--workspace", str(workspace), "--file", "a.py", "--line", "3")
    assert proc.returncode == 2 and "--stdin" in proc.stderr


def test_serve_pools_the_workspaces_repositories(tmp_path, py_repo, java_repo):
    pytest.importorskip("mcp", reason="the serve extra is not installed")
    from greprag.cli.serve import _service

    service = _service(None, _workspace_file(tmp_path, py_repo, java_repo), 8000, False)
    assert service.pool.roots == [py_repo.resolve(), java_repo.resolve()]


def test_cli_an_unreachable_ray_address_is_one_line_and_exit_3(tmp_path, py_repo, java_repo):
    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workspace = _workspace_file(tmp_path, py_repo, java_repo)
    proc = greprag_stdin(
        "x = load(", "--workspace", str(workspace), "--ray-address", f"127.0.0.1:{port}"
    )
    assert proc.returncode == 3
    assert proc.stderr.startswith("greprag: error: ") and proc.stderr.count("\n") == 1
    assert f"127.0.0.1:{port}" in proc.stderr or "Ray is not installed" in proc.stderr


@pytest.mark.dense
def test_cli_index_workspace_indexes_every_repo_once(tmp_path, py_repo, java_repo):
    from greprag.routes.dense import dense_available

    if not dense_available():
        pytest.skip("dense extra not installed")
    workspace = _workspace_file(tmp_path, py_repo, java_repo)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = greprag("index", "--workspace", str(workspace), *cache)
    again = greprag("index", "--workspace", str(workspace), *cache)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["pipeline", "orders"]
    assert all(" 0 chunk(s) embedded" not in line for line in lines)
    assert again.returncode == 0 and all(
        " 0 chunk(s) embedded" in line for line in again.stdout.splitlines()
    )


def test_cli_search_over_a_workspace_of_a_manual_and_code(tmp_path, py_repo):
    pytest.importorskip("markdown_it", reason="the docs extra is not installed")
    manual = FIXTURES / "docs_manual"
    workspace = tmp_path / "team.toml"
    workspace.write_text(
        f'[[repos]]\npath = "{py_repo}"\nname = "pipeline"\n\n'
        f'[[repos]]\npath = "{manual}"\nname = "manual"\nkind = "docs"\n'
    )
    proc = greprag(
        "search",
        "how do I retry a request after a timeout",
        "--workspace",
        str(workspace),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    manual_blocks = [b for b in payload["blocks"] if b["repo"] == "manual"]
    assert manual_blocks and payload["blocks"][0]["repo"] == "manual"
    assert any("retries.md" in b["path"] for b in manual_blocks)
    assert payload["missing"] == []


def test_cli_ask_over_a_workspace_cites_the_repo_of_each_passage(tmp_path, py_repo, docs_repo):
    from tests.stubs.openai_stub import OpenAIStub

    workspace = tmp_path / "team.toml"
    workspace.write_text(
        f'[[repos]]\npath = "{py_repo}"\nname = "pipeline"\n\n'
        f'[[repos]]\npath = "{docs_repo}"\nname = "manual"\n'
    )
    cited = "manual/tidewater/client.py:9-11"  # def backoff_delay, qualified by its repo
    with OpenAIStub() as stub:
        stub.reply(f"Wait backoff_delay(attempt) s [{cited}], not [tidewater/client.py:9-11].")
        model = {"GREPRAG_API_BASE": stub.api_base, "GREPRAG_API_KEY": "sk-test"}
        proc = greprag(
            "ask",
            "how long to wait before the next retry attempt",
            "--workspace",
            str(workspace),
            "--model",
            "openai/stub-model",
            "--json",
            env=_env(**model),
        )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["answer"] == f"Wait backoff_delay(attempt) s [{cited}], not ."
    assert [(c["repo"], c["path"]) for c in payload["citations"]] == [
        ("manual", "tidewater/client.py")
    ]
    assert payload["removed_citations"] == ["tidewater/client.py:9-11"]  # unqualified: no block
    assert (
        '<passage cite="manual/tidewater/client.py:9-' in stub.requests[0]["messages"][1]["content"]
    )
