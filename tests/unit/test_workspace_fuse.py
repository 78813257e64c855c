"""Fusing repositories' answers: weighted order, repo tags, the budget, labelled gaps."""

from __future__ import annotations

from greprag.models import Block, Drop, Result, Skip
from greprag.render import block_text
from greprag.tokens import count_tokens
from greprag.workspace import RepoAnswer, fuse


def _block(path: str, score: float, lines: int = 3) -> Block:
    text = "\n".join(f"def {path.split('.')[0]}_{i}(): return {i}" for i in range(lines))
    return Block(path, 1, lines, text, score)


def _result(*blocks: Block, notes: tuple[str, ...] = ()) -> Result:
    return Result(
        list(blocks),
        "",
        0,
        [],
        {"total": 5.0},
        "offline",
        fallbacks=list(notes),
        skipped=[Skip("big.bin", "binary")],
        dropped=[Drop("far.py", 1, 9, "over budget", 0.1)],
    )


def test_blocks_are_ordered_by_weighted_score_and_tagged_with_their_repo():
    answers = [
        RepoAnswer(0, "app", 1.0, _result(_block("a.py", 1.0), _block("b.py", 0.5))),
        RepoAnswer(1, "lib", 2.0, _result(_block("c.py", 0.4), _block("d.py", 0.2))),
    ]
    fused = fuse(answers, budget=4000, encoding="cl100k_base")
    order = [(b.repo, b.path, b.score) for b in fused.blocks]
    assert order == [
        ("app", "a.py", 1.0),
        ("lib", "c.py", 0.8),
        ("app", "b.py", 0.5),
        ("lib", "d.py", 0.4),
    ]
    assert fused.context.startswith("# [app] a.py:1-3\n")
    assert fused.to_dict()["blocks"][1]["repo"] == "lib"
    assert fused.missing == []
    assert set(fused.timings) == {"repo app", "repo lib"}
    assert [s.path for s in fused.skipped] == ["app/big.bin", "lib/big.bin"]


def test_ties_keep_workspace_order_then_each_repos_own_order():
    answers = [
        RepoAnswer(1, "second", 1.0, _result(_block("x.py", 1.0), _block("y.py", 1.0))),
        RepoAnswer(0, "first", 1.0, _result(_block("z.py", 1.0))),
    ]
    fused = fuse(answers, budget=4000, encoding="cl100k_base")
    assert [(b.repo, b.path) for b in fused.blocks] == [
        ("first", "z.py"),
        ("second", "x.py"),
        ("second", "y.py"),
    ]


def test_the_fused_context_holds_the_budget_and_names_what_it_left_out():
    blocks = [_block(f"m{i}.py", 1.0 - i / 100, lines=20) for i in range(12)]
    answers = [
        RepoAnswer(0, "big", 1.0, _result(*blocks[:6])),
        RepoAnswer(1, "other", 1.0, _result(*blocks[6:])),
    ]
    one = count_tokens(block_text(Block(**{**blocks[0].to_dict(), "repo": "big"})))
    budget = one * 3 + 2
    fused = fuse(answers, budget=budget, encoding="cl100k_base")
    assert len(fused.blocks) == 3
    assert fused.tokens == count_tokens(fused.context) <= budget
    left_out = [d for d in fused.dropped if d.reason == "over the workspace budget"]
    assert len(left_out) == 9 and left_out[0].path == "big/m3.py"
    assert any(d.path == "big/far.py" for d in fused.dropped)  # the repos' own drops too


def test_missing_repos_are_named_once_per_reason_and_notes_are_not_repeated():
    answers = [
        RepoAnswer(0, "app", 1.0, _result(_block("a.py", 1.0), notes=("dense skipped",))),
        RepoAnswer(1, "lib", 1.0, error="shard 2/2 did not answer within 2.0 s"),
        RepoAnswer(2, "docs", 1.0, error="shard 2/2 did not answer within 2.0 s"),
        RepoAnswer(3, "web", 1.0, _result(_block("w.py", 0.3), notes=("dense skipped",))),
    ]
    fused = fuse(answers, budget=4000, encoding="cl100k_base")
    assert fused.missing == ["lib", "docs"]
    assert fused.fallbacks == [
        "partial answer: 2 repo(s) missing (lib, docs): shard 2/2 did not answer within 2.0 s",
        "[app] dense skipped",
    ]
    assert fused.to_dict()["missing"] == ["lib", "docs"]


def test_no_answer_at_all_is_an_empty_labelled_result():
    fused = fuse([RepoAnswer(0, "app", 1.0, error="gone")], budget=100, encoding="cl100k_base")
    assert fused.blocks == [] and fused.context == "" and fused.tokens == 0
    assert fused.missing == ["app"]
