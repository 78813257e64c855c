"""Grep route end to end on the Java fixture repo, with the real rg binary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from greprag import Retriever
from tests.conftest import check_invariants, covering, cursor, describe, line_of

BUDGET = 4096
SRC = "src/main/java/com/shop"
HANDLER = f"{SRC}/orders/OrderHandler.java"
DISTRACTORS = (f"{SRC}/workers/", f"{SRC}/payment/", f"{SRC}/inventory/")


@pytest.fixture(scope="module")
def retriever(java_repo: Path) -> Retriever:
    return Retriever(java_repo, budget=BUDGET, router="offline")


def _balanced(text: str) -> bool:
    """Braces balance once strings, chars and comments are removed."""
    code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/', "", text, flags=re.S)
    return code.count("{") == code.count("}")


def test_enum_use_brings_constants_and_interface(java_repo, retriever):
    at = cursor(java_repo, HANDLER, "OrderStatus status = ", "OrderStatus status = ")
    res = retriever.retrieve(**at.kwargs())

    check_invariants(java_repo, res, at.file, BUDGET, at.line)
    enum = [b for b in res.blocks if b.path == f"{SRC}/orders/OrderStatus.java"]
    assert enum, f"OrderStatus missing: {describe(res)}"
    constants = "".join(b.text for b in enum)
    for constant in ("CREATED", "AWAITING_PAYMENT", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"):
        assert constant in constants, f"{constant} missing: {describe(res)}"
    interface = line_of(java_repo, f"{SRC}/api/RequestHandler.java", r"interface RequestHandler")
    assert covering(res, f"{SRC}/api/RequestHandler.java", interface), describe(res)


def test_enum_use_prefers_the_right_enum(java_repo, retriever):
    at = cursor(java_repo, HANDLER, "OrderStatus status = ", "OrderStatus status = ")
    res = retriever.retrieve(**at.kwargs())

    ranked = [b.path for b in sorted(res.blocks, key=lambda b: -b.score)]
    enum = f"{SRC}/orders/OrderStatus.java"
    decoy = f"{SRC}/payment/PaymentStatus.java"
    assert enum in ranked, describe(res)
    assert decoy not in ranked or ranked.index(enum) < ranked.index(decoy), describe(res)


def test_generic_identifiers_do_not_flood(java_repo, retriever):
    at = cursor(java_repo, f"{SRC}/app/Bootstrap.java", "scheduler.submit", "scheduler.")
    res = retriever.retrieve(**at.kwargs())

    check_invariants(java_repo, res, at.file, BUDGET, at.line)
    gold = line_of(java_repo, f"{SRC}/jobs/JobScheduler.java", r"public class JobScheduler")
    assert covering(res, f"{SRC}/jobs/JobScheduler.java", gold), describe(res)
    assert "public void submit" in res.context, describe(res)
    # probes for generic names (init, config, run) never bring the distractors in; the
    # similar-code route may fill the rest of the budget with them, after the definition
    probed = [b for b in res.blocks if b.path.startswith(DISTRACTORS) and b.route != "similar"]
    assert len(probed) <= 3, f"{len(probed)} distractor blocks: {describe(res)}"
    assert sum(b.tokens for b in probed) <= res.tokens // 2, describe(res)
    scheduler = covering(res, f"{SRC}/jobs/JobScheduler.java", gold)[0]
    similar = [b for b in res.blocks if b.route == "similar"]
    assert all(b.score < scheduler.score for b in similar), describe(res)
    assert res.queries[0].identifier not in {"init", "config", "run", "get", "data"}


def test_blocks_are_whole_and_queries_are_java(java_repo, retriever):
    for at in (
        cursor(java_repo, HANDLER, "OrderStatus status = ", "OrderStatus status = "),
        cursor(java_repo, HANDLER, "repository.save(order)", "repository."),
        cursor(java_repo, f"{SRC}/inventory/InventoryHandler.java", "int available", "int "),
    ):
        res = retriever.retrieve(**at.kwargs())
        check_invariants(java_repo, res, at.file, BUDGET, at.line)
        assert res.blocks, f"nothing retrieved at {at}"
        assert all(q.lang == "java" for q in res.queries)
        for block in res.blocks:
            assert block.path.endswith(".java")
            if not block.outline:
                assert _balanced(block.text), f"cut block {block.path}:{block.start_line}"


def test_repository_members_come_back(java_repo, retriever):
    at = cursor(java_repo, HANDLER, "repository.save(order)", "repository.")
    res = retriever.retrieve(**at.kwargs())

    repo_file = f"{SRC}/orders/OrderRepository.java"
    save = line_of(java_repo, repo_file, r"public void save")
    find = line_of(java_repo, repo_file, r"findById")
    assert covering(res, repo_file, save) and covering(res, repo_file, find), describe(res)
