"""Template patterns run with prefilter-friendly spaces find exactly the lines they
find as written: real plans, real rg, real Python and Java files."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import greprag
from greprag import Retriever
from greprag.rg import SearchSpec, build_argv, find_rg
from greprag.rg import rg_pattern as rg_regex
from greprag.routes.grep import rg_pattern

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_CALL = re.compile(r"\b[A-Za-z_]\w*\(")


def _cursors(repo: Path, suffix: str, limit: int) -> list[tuple[str, int, int]]:
    """(file, line, column) just after the first call on lines inside bodies."""
    found = []
    for path in sorted(repo.rglob(f"*{suffix}")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, text in enumerate(lines, 1):
            match = _CALL.search(text)
            if match and text.startswith((" " * 8, "\t\t")):
                found.append((path.relative_to(repo).as_posix(), number, match.end()))
                break
    return found[:limit]


def _lines(repo: Path, patterns: list[str], lang: str) -> list[bytes]:
    spec = SearchSpec(patterns=tuple(patterns), langs=(lang,), max_count_per_file=10_000)
    out = subprocess.run(build_argv(find_rg(), spec), cwd=repo, capture_output=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    return sorted(out.stdout.splitlines())


@pytest.mark.parametrize(
    ("repo", "suffix", "lang"),
    [
        (Path(greprag.__file__).parent, ".py", "python"),
        (FIXTURES / "java_orders", ".java", "java"),
    ],
)
def test_plans_find_the_same_lines_with_prefilter_friendly_spaces(tmp_path, repo, suffix, lang):
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns("__pycache__"))
    retriever = Retriever(copy, router="offline")
    changed = matched = 0
    for file, line, column in _cursors(copy, suffix, 12):
        plan = retriever.plan(file=file, line=line, column=column)
        queries = [q for q in plan.queries if not q.fixed]
        as_written = [rg_regex(q.pattern) for q in queries]
        as_run = [rg_pattern(q) for q in queries]
        changed += sum(a != b for a, b in zip(as_written, as_run, strict=True))
        found = _lines(copy, as_written, lang)
        assert _lines(copy, as_run, lang) == found, (file, line)
        matched += len(found)
    assert changed and matched, "the plans exercised the rewrite and matched lines"


def test_the_python_binding_template_finds_what_its_optional_self_form_finds():
    """``^\\s*(self\\.|\\s*)x`` (which rg prefilters by ``x`` alone) against the plainer
    ``^\\s*(self\\.)?x``: the same lines in rg and in Python, over real Python files."""
    from greprag.languages import get_language

    template = get_language("python").definition["variable"]
    plain = template.replace(r"(self\.|\s*)", r"(self\.)?")
    assert plain != template
    repo = Path(greprag.__file__).parent
    names = ["settings", "files", "lines", "plan", "repo", "timeout", "rg"]
    found = 0
    for name in names:
        ours, theirs = template.format(name=name), plain.format(name=name)
        rg_lines = _lines(repo, [rg_regex(ours, template=True)], "python")
        assert rg_lines == _lines(repo, [rg_regex(theirs)], "python"), name
        found += len(rg_lines)
        for path in repo.rglob("*.py"):
            for text in path.read_text(encoding="utf-8").splitlines():
                assert bool(re.search(ours, text)) == bool(re.search(theirs, text)), text
    assert found, "the names are bound somewhere"
