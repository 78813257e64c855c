"""Real third-party code for comparison tests: pinned sdists fetched from PyPI on first use.

Nothing here is committed: ``fetch`` downloads a pinned sdist with pip into
``~/.cache/greprag-tests`` and unpacks it; the test is skipped (saying why) only when the
download fails.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from greprag.syntax import Span, file_spans
from greprag.syntax.grammars import grammar_key
from greprag.syntax.treesitter import tree_analysis


@dataclass(frozen=True)
class Source:
    """A pinned sdist and the files of one language in it."""

    package: str
    version: str
    lang: str
    pattern: str  # glob inside the folder the sdist unpacks into
    agreement: float = 0.0  # pinned rates, where a test pins any
    precision: float = 0.0


@pytest.fixture(scope="session")
def cache() -> Path:
    """Where fetched sources are kept between runs."""
    folder = Path.home() / ".cache" / "greprag-tests"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fetch(source: Source, cache: Path) -> Path:
    """The unpacked sdist, downloaded with pip on first use; skips when pip cannot get it."""
    root = cache / f"{source.package}-{source.version}"
    done = root / ".unpacked"
    if done.exists():
        return root
    downloads = cache / "downloads"
    spec = f"{source.package}=={source.version}"
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
    proc = subprocess.run(
        [*pip, "--quiet", "--no-binary", ":all:", "-d", str(downloads), spec],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"cannot download the {spec} sdist (network?): {reason}")
    prefix = f"{source.package}-{source.version}".lower()
    archive = next(p for p in downloads.glob("*.tar.gz") if p.name.lower().startswith(prefix))
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    done.touch()
    return root


def parsed_files(source: Source, root: Path) -> Iterator[tuple[str, list[str], str, list[Span]]]:
    """(path, lines, text, spans) of each file of ``source`` under ``root`` that tree-sitter
    parses cleanly, in path order: ``text`` is the lines joined as the widener joins them."""
    key = grammar_key(source.lang)
    assert key is not None
    for file in sorted(p for p in root.glob(source.pattern) if p.is_file()):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        text = "\n".join(lines)
        if tree_analysis(key, text.encode("utf-8", "replace"), strict=True) is None:
            continue
        path = file.relative_to(root).as_posix()
        yield path, lines, text, file_spans(path, text, source.lang)


@pytest.fixture(scope="session")
def click_source(cache: Path) -> Path:
    """click 8.1.7's sdist, unpacked: real Python nobody here wrote."""
    return fetch(Source("click", "8.1.7", "python", "**/*.py"), cache)
