"""Trust boundaries: a repository's config cannot run a program, pick the LLM or the cache,
and no path from any source reads outside the repository."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from greprag import Retriever
from greprag.config import REPO_SETTINGS, Settings, load_settings
from greprag.files import FileCache, inside, read_bytes, safe_relative
from tests.conftest import ROOT, cursor

SECRET = "TOP_SECRET_OUTSIDE_THE_REPO"


def _hostile_script(tmp_path: Path) -> tuple[Path, Path]:
    """A script a repo could ship as its 'rg'; it leaves a marker file when run."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil-rg"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def test_repo_config_cannot_name_the_rg_binary(py_repo, tmp_path):
    script, marker = _hostile_script(tmp_path)
    config = py_repo / ".greprag.toml"
    config.write_text(f'rg_path = "{script}"\nbudget = 900\n')
    try:
        retriever = Retriever(py_repo)
        res = retriever.retrieve(
            **cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.").kwargs()
        )
    finally:
        config.unlink()
    assert not marker.exists()
    assert retriever.settings.rg_path == "" and retriever.settings.budget == 900
    assert res.blocks, "the search still ran with the real rg"
    assert any("may not set rg_path" in note for note in res.fallbacks)


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ('router = "llm"', "router"),
        ('model = "openai/attacker-model"', "model"),
        ('api_base = "http://attacker.example/v1"', "api_base"),
        ('dense_cache_dir = "/tmp/attacker"', "dense_cache_dir"),
        ('cache_dir = "/tmp/attacker"', "cache_dir"),
        ('dense_model = "./models/pickled"', "dense_model"),
    ],
)
def test_repo_config_cannot_choose_the_model_or_where_files_go(tmp_path, line, name):
    (tmp_path / ".greprag.toml").write_text(line + "\n")
    settings = load_settings(tmp_path)
    assert getattr(settings, name) == getattr(Settings(), name)
    assert any(f"may not set {name}" in note for note in settings.notes)


def test_the_user_may_set_what_a_repo_may_not(tmp_path, monkeypatch):
    user = tmp_path / "user.toml"
    user.write_text('router = "llm"\nmodel = "openai/mine"\nbudget = 1000\n')
    monkeypatch.setenv("GREPRAG_CONFIG", str(user))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".greprag.toml").write_text('budget = 2000\nmodel = "openai/theirs"\n')
    settings = load_settings(repo)
    assert (settings.router, settings.model, settings.budget) == ("llm", "openai/mine", 2000)
    monkeypatch.setenv("GREPRAG_MODEL", "openai/from-env")
    assert load_settings(repo).model == "openai/from-env"
    assert load_settings(repo, model="openai/argument").model == "openai/argument"


def test_repo_settings_exclude_everything_that_runs_writes_or_sends():
    user_only = {"router", "model", "api_base", "api_key", "llm_timeout", "answer_timeout"}
    user_only |= {"rg_path", "similar_process"}
    user_only |= {"cache_dir", "dense_model", "dense_backend", "dense_cache_dir"}
    every = {f for f in Settings.__dataclass_fields__ if f != "notes"}
    assert every - user_only == REPO_SETTINGS


def test_documented_user_only_settings_match_the_code():
    text = (ROOT / "configs" / "default.toml").read_text()
    marked = {line.split("=")[0].strip() for line in text.splitlines() if "# [user]" in line}
    every = {f for f in Settings.__dataclass_fields__ if f != "notes"}
    assert marked == every - REPO_SETTINGS


def test_a_symlinked_repo_config_pointing_outside_is_not_read(tmp_path):
    outside = tmp_path / "elsewhere.toml"
    outside.write_text("budget = 123\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".greprag.toml").symlink_to(outside)
    settings = load_settings(repo)
    assert settings.budget == 4096
    assert any("links outside the repository" in note for note in settings.notes)


def test_the_cli_reports_ignored_repo_settings_and_still_answers(py_repo, tmp_path):
    script, marker = _hostile_script(tmp_path)
    config = py_repo / ".greprag.toml"
    config.write_text(f'rg_path = "{script}"\nrouter = "llm"\n')
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "greprag",
                "retrieve",
                "--repo",
                str(py_repo),
                "--file",
                where.file,
                "--line",
                str(where.line),
                "--column",
                str(where.column),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        config.unlink()
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    payload = json.loads(proc.stdout)
    assert payload["router"] == "offline" and payload["blocks"]
    assert "may not set rg_path, router" in proc.stderr


# --- paths never leave the root ------------------------------------------------------


@pytest.mark.parametrize("path", ["", ".", "/etc/passwd", "../x", "a/../../x", "a\x00b", "a\\b"])
def test_unsafe_relative_paths_are_refused(path):
    assert safe_relative(path) is None


def test_reads_refuse_symlinks_out_fifos_and_dotdot(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (root / "pkg" / "ok.py").write_text("x = 1\n")
    (root / "pkg" / "link_in.py").symlink_to(root / "pkg" / "ok.py")
    (root / "pkg" / "link_out.py").symlink_to(secret)
    (root / "dir_out").symlink_to(tmp_path)
    (root / "dir_in").symlink_to(root / "pkg")
    (root / "pkg" / "hop.py").symlink_to(root / "dir_out" / "secret.txt")  # in, then out
    os.mkfifo(root / "pkg" / "pipe.py")
    real = Path(os.path.realpath(root))
    assert read_bytes(real, "pkg/ok.py") == b"x = 1\n"
    assert read_bytes(real, "pkg/link_in.py") == b"x = 1\n"
    assert read_bytes(real, "dir_in/ok.py") == b"x = 1\n"
    assert inside(real, "dir_in/ok.py") == real / "pkg" / "ok.py"
    for path in (
        "pkg/link_out.py",
        "dir_out/secret.txt",
        "../secret.txt",
        "pkg/pipe.py",
        "pkg/hop.py",
        "dir_in/hop.py",
    ):
        assert read_bytes(real, path) is None, path
    assert inside(real, "dir_out/secret.txt") is None
    assert inside(real, "pkg/missing/x.py") == real / "pkg" / "missing" / "x.py"


def test_a_file_swapped_for_a_symlink_out_never_reaches_a_warm_retriever(py_repo, tmp_path):
    """The file list is reused for file_list_ttl: rg then gets the symlink as an explicit
    path and follows it. The read-time check keeps the outside text out."""
    secret = tmp_path / "loader_secret.py"
    secret.write_text(
        f"class DataLoader:\n    '''{SECRET}'''\n"
        f"    def load_batch(self):\n        return '{SECRET}'\n"
    )
    target = py_repo / "data" / "loader.py"
    original = target.read_bytes()
    where = cursor(py_repo, "pipeline/processor.py", "self.loader.", "self.loader.")
    retriever = Retriever(py_repo, file_list_ttl=600)
    first = retriever.retrieve(**where.kwargs())
    assert any(b.path == "data/loader.py" for b in first.blocks)
    target.unlink()
    target.symlink_to(secret)
    try:
        res = retriever.retrieve(**where.kwargs())
    finally:
        target.unlink()
        target.write_bytes(original)
    assert SECRET not in res.context
    assert all(SECRET not in b.text for b in res.blocks)
    assert any(s.path == "data/loader.py" and "outside" in s.reason for s in res.skipped)


@pytest.mark.dense
def test_dense_rows_are_checked_against_the_root_when_read(tmp_path):
    pytest.importorskip("faiss")
    from greprag.dense.store import Row
    from greprag.routes.dense import DenseRoute

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    route = DenseRoute(repo, cache_dir=tmp_path / "cache")
    hostile = Row(id=1, path="../../../../etc/passwd", start_line=1, end_line=5, symbol="", key="k")
    absolute = Row(id=2, path="/etc/passwd", start_line=1, end_line=5, symbol="", key="k")
    good = Row(id=3, path="a.py", start_line=1, end_line=2, symbol="f", key="k")
    files = FileCache(route.repo)
    assert route._candidate(hostile, 0.9, files) is None
    assert route._candidate(absolute, 0.9, files) is None
    assert route._candidate(good, 0.5, files).text == "def f():\n    return 1"
