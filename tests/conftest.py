"""Shared fixtures: throw-away git copies of the fixture repos, cursors and invariants."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from greprag.tokens import count_tokens

ROOT = Path(__file__).resolve().parents[1]  # the project
FIXTURES = Path(__file__).parent / "fixtures"
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """No test sees the developer's GREPRAG_* variables or user config, or writes to the
    user's cache (indexes, docs-mode records)."""
    for name in [n for n in os.environ if n.startswith("GREPRAG_")]:
        monkeypatch.delenv(name)
    base = tmp_path_factory.getbasetemp()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "no-user-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))


def written_repo(root: Path, files: dict[str, str]) -> Path:
    """``files`` (path → text) written under ``root``, made a git work tree, all added."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    return root


def _git_copy(src: Path, dest: Path) -> Path:
    """Copy a fixture repo to ``dest`` and make it a git work tree (so .gitignore applies)."""
    shutil.copytree(src, dest)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


@pytest.fixture(scope="session")
def py_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python fixture, plus a git-ignored build/ copy of the loader that must never match."""
    repo = _git_copy(FIXTURES / "py_pipeline", tmp_path_factory.mktemp("py") / "py_pipeline")
    ignored = repo / "build" / "lib" / "data" / "loader.py"
    ignored.parent.mkdir(parents=True)
    shutil.copy(repo / "data" / "loader.py", ignored)
    return repo


@pytest.fixture(scope="session")
def java_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _git_copy(FIXTURES / "java_orders", tmp_path_factory.mktemp("java") / "java_orders")


@pytest.fixture(scope="session")
def docs_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small library with its manual: Markdown, reStructuredText, plain text, Sphinx,
    MkDocs and Javadoc HTML pages, and documented Python code."""
    return _git_copy(FIXTURES / "docs_manual", tmp_path_factory.mktemp("docs") / "docs_manual")


@pytest.fixture(scope="session")
def junk_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python fixture plus files a retriever must skip: binary, too large, minified.

    Each mentions ``DataLoader``, the identifier the loader scenario searches for.
    """
    repo = _git_copy(FIXTURES / "py_pipeline", tmp_path_factory.mktemp("junk") / "py_pipeline")
    blob = b"class DataLoader:\n" + b"\x00\x01\x02\xff" * 256 + b"DataLoader\n" * 50
    (repo / "data" / "blob.py").write_bytes(blob)
    rows = "".join(f'ROW_{i} = DataLoader("rows/{i}.csv", {i % 64})\n' for i in range(40_000))
    (repo / "data" / "generated_rows.py").write_text(rows)
    minified = ";".join(f"v{i}=DataLoader({i}).load_batch({i})" for i in range(3_000))
    (repo / "data" / "vendored_min.py").write_text(minified + "\n")
    return repo


@dataclass(frozen=True)
class Cursor:
    file: str
    line: int
    column: int

    def kwargs(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column}


def outline(text: str, lang: str, start: int, end: int, spans=None, analysis=None) -> str:
    """The text of ``syntax.outlined`` (most tests compare outlines as text)."""
    from greprag.syntax import outlined

    return outlined(text, lang, start, end, spans, analysis).text


def cursor(repo: Path, file: str, line_contains: str, prefix: str) -> Cursor:
    """The cursor just after ``prefix`` on the first line of ``file`` with ``line_contains``."""
    for number, text in enumerate(read_lines(repo, file), start=1):
        if line_contains in text:
            return Cursor(file, number, text.index(prefix) + len(prefix))
    raise AssertionError(f"{line_contains!r} not found in {file}")


def read_lines(repo: Path, file: str) -> list[str]:
    return (repo / file).read_text(encoding="utf-8").splitlines()


def line_of(repo: Path, file: str, pattern: str) -> int:
    """1-based number of the first line of ``file`` matching the regex ``pattern``."""
    for number, text in enumerate(read_lines(repo, file), start=1):
        if re.search(pattern, text):
            return number
    raise AssertionError(f"{pattern!r} not found in {file}")


def covering(res, path: str, line: int):
    """Blocks of ``res`` from ``path`` whose range contains ``line``."""
    return [b for b in res.blocks if b.path == path and b.start_line <= line <= b.end_line]


def _written_until(repo: Path, path: str, line: int) -> int:
    """The last line of the outermost function holding ``line`` by tree-sitter (else
    ``line``): the code being written, which no block may show."""
    from greprag.languages import language_for_path
    from greprag.syntax.analysis import file_spans

    text = (repo / path).read_text()
    lang = language_for_path(path)
    spans = file_spans(path, text, lang.name if lang else None)
    ends = [
        s.end_line for s in spans if s.kind == "function" and s.start_line <= line <= s.end_line
    ]
    return max(ends, default=line)


def describe(res) -> str:
    """A compact listing of what came back, for assertion messages."""
    blocks = ", ".join(
        f"{b.path}:{b.start_line}-{b.end_line}{'(o)' if b.outline else ''}@{b.score:.2f}"
        for b in res.blocks
    )
    queries = ", ".join(f"{q.kind}:{q.identifier or q.pattern}" for q in res.queries)
    return f"blocks=[{blocks}] queries=[{queries}] tokens={res.tokens}"


def check_invariants(
    repo: Path, res, current: str | None, budget: int, line: int | None = None
) -> None:
    """Contract checks every retrieval must pass, whatever the scenario. ``current`` is
    the file under the cursor, on ``line``: a block of it must lie below the function that
    holds the cursor (tree-sitter's spans, not the scan retrieval uses, say where it ends).
    """
    assert res.tokens <= budget, describe(res)
    assert res.tokens == count_tokens(res.context)
    for block in res.blocks:
        if block.path == current:
            assert line is not None, f"current file in blocks: {describe(res)}"
            assert block.start_line > _written_until(repo, current, line), describe(res)
        assert not block.path.startswith(("/", "..")) and "\\" not in block.path
        assert 1 <= block.start_line <= block.end_line
        assert f"{block.path}:{block.start_line}-{block.end_line}" in res.context
        assert block.text.strip() and block.text.strip() in res.context
        if not block.outline:
            lines = read_lines(repo, block.path)[block.start_line - 1 : block.end_line]
            assert block.text.rstrip("\n") == "\n".join(lines).rstrip("\n"), (
                f"{block.path}:{block.start_line}-{block.end_line} text differs from the file"
            )
    by_file: dict[str, list] = {}
    for block in res.blocks:
        by_file.setdefault(block.path, []).append(block)
    for path, blocks in by_file.items():
        blocks.sort(key=lambda b: b.start_line)
        for left, right in itertools.pairwise(blocks):
            assert left.end_line + 1 < right.start_line, (
                f"{path}: blocks {left.start_line}-{left.end_line} and "
                f"{right.start_line}-{right.end_line} overlap or touch"
            )
