"""A repository's config (and the user's) cannot make a retrieval unbounded, undefined or
crash: every bad value is one line and exit 2, and what a repo may not set is ignored."""

from __future__ import annotations

import os
import stat

from tests.reliability.cases import case, cases
from tests.reliability.conftest import CURSOR, cli, cli_env, notes, one_line_error

AREA = "config bounds"

BAD_REPO_SETTINGS = [
    ("budget-nan", "budget = nan", "budget"),
    ("budget-zero", "budget = 0", "budget must be in 1..999999"),
    ("budget-huge", "budget = 1e12", "budget must be in"),
    ("max-count", "max_count_per_file = 1000000000", "max_count_per_file must be in"),
    ("weight-inf", "dense_weight = inf", "dense_weight must be in"),
    ("weight-nan", "bm25_weight = nan", "bm25_weight must be in"),
    ("window-negative", "window_lines = -5", "window_lines must be in"),
    ("queries-zero", "max_queries = 0", "max_queries must be in"),
    ("filesize-negative", 'max_filesize = "-1"', "max_filesize must be a size"),
    ("filesize-garbage", 'max_filesize = "lots"', "max_filesize must be a size"),
    ("encoding-download", 'encoding = "r50k_base"', "encoding must be one of"),
    ("routes-unknown", 'routes = "everything"', "routes must be one of"),
    ("bool-word", 'dedup = "maybe"', "setting 'dedup' expects bool"),
    ("unknown-key", "colour = 3", "unknown setting 'colour'"),
    ("not-toml", "budget = = 3", "repository config"),
]


@cases(
    AREA,
    [
        (
            ident,
            f"a repository .greprag.toml with `{line}`",
            f"one line '{said}', exit 2",
            line,
            said,
        )
        for ident, line, said in BAD_REPO_SETTINGS
    ],
    "line, said",
)
def test_a_bad_repo_setting_is_one_line(loader_repo, line, said):
    (loader_repo / ".greprag.toml").write_text(line + "\n")
    proc = cli("queries", "--repo", str(loader_repo), *CURSOR)
    one_line_error(proc, 2, said)


@case(
    AREA,
    "a 2 MB repository .greprag.toml",
    "one line 'larger than', exit 2",
)
def test_a_huge_repo_config_is_one_line(loader_repo):
    (loader_repo / ".greprag.toml").write_text("# pad\n" * 400_000)
    one_line_error(cli("queries", "--repo", str(loader_repo), *CURSOR), 2, "larger than")


@case(
    AREA,
    "a repository .greprag.toml that is not UTF-8",
    "one line naming the file, exit 2",
)
def test_a_non_utf8_repo_config_is_one_line(loader_repo):
    (loader_repo / ".greprag.toml").write_bytes(b"budget = 100 # caf\xe9\n")
    one_line_error(cli("queries", "--repo", str(loader_repo), *CURSOR), 2, ".greprag.toml")


@case(
    AREA,
    "$GREPRAG_CONFIG naming a missing file, and a FIFO",
    "one line 'is not a readable file', exit 2 (never a blocked read)",
)
def test_a_named_user_config_that_is_not_a_file(loader_repo, tmp_path):
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    for path in (tmp_path / "missing.toml", fifo):
        proc = cli(
            "queries", "--repo", str(loader_repo), *CURSOR, env=cli_env(GREPRAG_CONFIG=str(path))
        )
        one_line_error(proc, 2, "is not a readable file")


@case(
    AREA,
    "a repository .greprag.toml pointing rg_path at a script it ships, and router = llm",
    "the script never runs; ignored with a note; the real rg answers, exit 0",
)
def test_a_repo_config_cannot_run_a_program(loader_repo, tmp_path):
    marker = tmp_path / "ran"
    script = loader_repo / "tools" / "rg"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (loader_repo / ".greprag.toml").write_text(f'rg_path = "{script}"\nrouter = "llm"\n')
    proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR)
    assert proc.returncode == 0 and "class DataLoader" in proc.stdout
    assert not marker.exists()
    assert any("may not set rg_path, router" in note for note in notes(proc))


@cases(
    AREA,
    [
        (
            "budget-flag",
            "--budget -5 on the command line",
            "one line 'budget must be in', exit 2",
            ["--budget", "-5"],
            {},
            "budget must be in",
        ),
        (
            "backend-env",
            "GREPRAG_DENSE_BACKEND=onnx in the environment",
            "one line 'dense_backend must be one of', exit 2",
            [],
            {"GREPRAG_DENSE_BACKEND": "onnx"},
            "dense_backend must be one of",
        ),
    ],
    "extra, env, said",
)
def test_bad_flags_and_variables_are_one_line(loader_repo, extra, env, said):
    proc = cli("retrieve", "--repo", str(loader_repo), *CURSOR, *extra, env=cli_env(**env))
    one_line_error(proc, 2, said)
