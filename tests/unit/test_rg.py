"""Finding rg and building its argv safely."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from greprag.rg import SearchSpec, build_argv, escape_regex, find_rg, parse_size


def test_rg_is_found_without_the_venv_on_path(tmp_path):
    code = "from greprag.rg import find_rg; print(find_rg())"
    env = {k: v for k, v in os.environ.items() if k != "GREPRAG_RG"}
    env["PATH"] = "/usr/bin:/bin"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    found = Path(out.stdout.strip())
    assert found.name == "rg" and os.access(found, os.X_OK)


def test_rg_override_that_does_not_exist_is_a_clear_error():
    from greprag.rg import RipgrepNotFound

    with pytest.raises(RipgrepNotFound, match="rg not found at /nope/rg"):
        find_rg("/nope/rg")


def test_argv_puts_every_pattern_after_dash_e_and_takes_no_flags_from_it():
    argv = build_argv(Path("/x/rg"), SearchSpec(patterns=("--pre=sh", "-z"), langs=("python",)))
    assert argv[argv.index("--pre=sh") - 1] == "-e" and argv[argv.index("-z") - 1] == "-e"
    assert argv[-2:] == ["--", "."] and "--type" in argv and "py" in argv
    assert not any(a.startswith("--pre") for i, a in enumerate(argv) if argv[i - 1] != "-e")


def test_escape_regex_and_sizes():
    assert escape_regex("a.b(c)$") == r"a\.b\(c\)\$"
    assert parse_size("1M") == 1 << 20 and parse_size("512K") == 512 << 10
