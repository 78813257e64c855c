"""The token budget, whole blocks, and special-token text."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from greprag import Retriever
from greprag.tokens import count_tokens
from tests.conftest import Cursor, check_invariants, cursor, describe

BUDGETS = (300, 800, 4096)
SRC = "src/main/java/com/shop"


def _python_cursors(repo: Path) -> list[Cursor]:
    return [
        cursor(repo, "pipeline/processor.py", "self.loader.load_batch", "data = self.loader."),
        cursor(repo, "transforms/normalize.py", "raise NotImplementedError", "        "),
        cursor(repo, "jobs/runner.py", "engine.run()", "engine."),
        cursor(repo, "pipeline/report.py", 'return {"column"', "    "),
    ]


def _java_cursors(repo: Path) -> list[Cursor]:
    return [
        cursor(repo, f"{SRC}/orders/OrderHandler.java", "OrderStatus status = ", "status = "),
        cursor(repo, f"{SRC}/app/Bootstrap.java", "scheduler.submit", "scheduler."),
    ]


@pytest.mark.parametrize("budget", BUDGETS)
def test_python_budget_respected_and_blocks_whole(py_repo, budget):
    retriever = Retriever(py_repo, budget=budget, router="offline")
    for at in _python_cursors(py_repo):
        res = retriever.retrieve(**at.kwargs())
        check_invariants(py_repo, res, at.file, budget, at.line)
        assert res.blocks, f"budget {budget} at {at}: nothing packed"
        for block in res.blocks:
            assert 0 < block.tokens <= res.tokens
            if not block.outline:
                try:
                    ast.parse(textwrap.dedent(block.text))
                except SyntaxError as exc:
                    pytest.fail(f"{block.path}:{block.start_line}-{block.end_line} cut: {exc}")


@pytest.mark.parametrize("budget", BUDGETS)
def test_java_budget_respected(java_repo, budget):
    retriever = Retriever(java_repo, budget=budget, router="offline")
    for at in _java_cursors(java_repo):
        res = retriever.retrieve(**at.kwargs())
        check_invariants(java_repo, res, at.file, budget, at.line)
        assert res.blocks, f"budget {budget} at {at}: nothing packed"


def test_larger_budget_packs_at_least_as_much(py_repo):
    at = _python_cursors(py_repo)[0]
    used = [
        Retriever(py_repo, budget=b, router="offline").retrieve(**at.kwargs()).tokens
        for b in BUDGETS
    ]
    assert used == sorted(used), used
    assert used[-1] > BUDGETS[0], used


def test_small_budget_drops_with_reasons(java_repo):
    at = _java_cursors(java_repo)[0]
    res = Retriever(java_repo, budget=300, router="offline").retrieve(**at.kwargs())

    check_invariants(java_repo, res, at.file, 300, at.line)
    assert res.dropped, f"nothing dropped at budget 300: {describe(res)}"
    assert all(drop.reason for drop in res.dropped)
    assert max(d.score for d in res.dropped) <= max(b.score for b in res.blocks)
    kept = {(b.path, b.start_line, b.end_line) for b in res.blocks if not b.outline}
    assert not kept & {(d.path, d.start_line, d.end_line) for d in res.dropped}


def test_oversized_block_goes_in_as_outline(py_repo):
    at = _python_cursors(py_repo)[0]
    full = Retriever(py_repo, budget=4096, router="offline").retrieve(**at.kwargs())
    loader = [b for b in full.blocks if b.path == "data/loader.py"]
    assert loader and not loader[0].outline, describe(full)
    budget = count_tokens(loader[0].text) // 2 + 40
    res = Retriever(py_repo, budget=budget, router="offline").retrieve(**at.kwargs())

    check_invariants(py_repo, res, at.file, budget, at.line)
    outline = [b for b in res.blocks if b.path == "data/loader.py"]
    assert outline and outline[0].outline, describe(res)
    assert "class DataLoader" in outline[0].text and "def load_batch" in outline[0].text
    assert "(outline)" in res.context


def test_special_token_text_is_plain_text(py_repo):
    at = cursor(py_repo, "pipeline/export.py", "marker.wrap", "marker.")
    res = Retriever(py_repo, budget=4096, router="offline").retrieve(**at.kwargs())

    check_invariants(py_repo, res, at.file, 4096, at.line)
    assert any(b.path == "textutil/markers.py" for b in res.blocks), describe(res)
    assert "<|endoftext|>" in res.context
    assert res.tokens == count_tokens(res.context) > count_tokens("<|endoftext|>")
