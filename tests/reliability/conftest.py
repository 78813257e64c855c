"""What the reliability cases share: building hostile repos, running the real CLI, and the
outcome checks every case makes (no traceback, one line, a documented exit code)."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from greprag.models import Query, QueryPlan

EXIT_CODES = {0, 1, 2, 3, 4, 130}
CLI_TIMEOUT_S = 60

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def make_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    """A git work tree at ``root`` holding ``files`` (text or bytes)."""
    root.mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


LOADER_REPO = {
    "pkg/__init__.py": "",
    "pkg/loader.py": "class DataLoader:\n    def load_batch(self, n):\n        return n\n",
    "pkg/other.py": "from pkg.loader import DataLoader\n\n\ndef use():\n"
    "    return DataLoader().load_batch(2)\n",
    "app.py": "from pkg.loader import DataLoader\n\nloader = DataLoader()\nloader.",
}
CURSOR = ["--file", "app.py", "--line", "4"]


@pytest.fixture
def loader_repo(tmp_path: Path) -> Path:
    """A small repo whose cursor (``app.py`` line 4) needs ``pkg/loader.py``."""
    return make_repo(tmp_path / "repo", LOADER_REPO)


class Proposed:
    """A router proposing fixed patterns, as a model might (``purpose="llm"``: untrusted)."""

    name = "model"

    def __init__(self, *patterns: str, context_lines: int = 3) -> None:
        self.patterns = patterns
        self.context_lines = context_lines

    def plan(self, ctx, imported=None) -> QueryPlan:
        queries = [
            Query(p, "other", lang=ctx.lang, purpose="llm", context_lines=self.context_lines)
            for p in self.patterns
        ]
        return QueryPlan(queries=queries, router=self.name)


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GREPRAG_")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2])])
    env.update(extra)
    return env


def cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    preexec: Callable[[], None] | None = None,
    timeout: float = CLI_TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """``greprag ARGS`` as a real process. Never a traceback, always a documented code."""
    proc = subprocess.run(
        [sys.executable, "-m", "greprag", *args],
        cwd=cwd,
        env=env or cli_env(),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        preexec_fn=preexec,
        check=False,
    )
    result = subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-2000:]
    assert result.returncode in EXIT_CODES, (result.returncode, result.stderr[-500:])
    return result


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """The single stderr line of a failed call, which must exit ``code`` and say ``words``."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("greprag: error: "), proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def notes(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The ``greprag: note:`` lines of a call's stderr."""
    return [line for line in proc.stderr.splitlines() if line.startswith("greprag: note:")]


def without_file_permissions() -> Callable[[], None] | None:
    """A ``preexec_fn`` under which file permissions hold even for root (the capabilities
    that bypass them dropped), or None when not root; skips when they cannot be dropped."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    probe = subprocess.run(["true"], preexec_fn=drop, check=False, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("running as root without CAP_SETPCAP: permissions cannot be enforced")
    return drop


def with_file_size_limit(limit: int) -> Callable[[], None]:
    """A ``preexec_fn`` making any write past ``limit`` bytes fail (EFBIG), as a full disk."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited
