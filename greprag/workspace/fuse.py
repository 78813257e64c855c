"""One ranking from many repositories: weighted scores, one token budget, labelled gaps.

Every repository answers the same query within the whole budget, so the fused answer is
the best of the union: blocks ordered by score × the repo's weight (ties: workspace
order, then each repo's own order), each tagged with its repo (the header cites it),
taken whole while they fit. Repositories that gave no answer are named in ``missing``
with the reason. The single-process and the Ray backends both end here, so they rank
alike by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from greprag.errors import GrepRAGError
from greprag.models import Block, Drop, Result, Skip
from greprag.render import block_text, render_context
from greprag.tokens import count_tokens

__all__ = ["RepoAnswer", "fuse"]


@dataclass
class RepoAnswer:
    """One repository's answer (``result``) or why there is none (``error``, and the
    ``failure`` itself when the repo raised one). ``index`` is the repo's place in the
    workspace file (the tie-break)."""

    index: int
    name: str
    weight: float
    result: Result | None = None
    error: str = ""
    failure: GrepRAGError | None = None


def _ranked(answers: list[RepoAnswer]) -> list[Block]:
    keyed: list[tuple[float, int, int, Block]] = []
    for answer in answers:
        if answer.result is None:
            continue
        for rank, block in enumerate(answer.result.blocks):
            score = round(block.score * answer.weight, 6)
            tagged = replace(block, score=score, repo=answer.name)
            keyed.append((-score, answer.index, rank, tagged))
    keyed.sort(key=lambda item: item[:3])
    return [item[3] for item in keyed]


def _pack(ranked: list[Block], budget: int, encoding: str) -> tuple[list[Block], list[Drop]]:
    kept: list[Block] = []
    dropped: list[Drop] = []
    used = 0
    for block in ranked:
        block.tokens = count_tokens(block_text(block), encoding)
        cost = block.tokens + (1 if kept else 0)  # the blank line between blocks
        if used + cost <= budget:
            kept.append(block)
            used += cost
        else:
            dropped.append(_drop(block, "over the workspace budget"))
    # the context is counted once more as a whole (joins can tokenize differently)
    while kept and count_tokens(render_context(kept), encoding) > budget:
        dropped.insert(0, _drop(kept.pop(), "over the workspace budget"))
    return kept, dropped


def _drop(block: Block, reason: str) -> Drop:
    return Drop(f"{block.repo}/{block.path}", block.start_line, block.end_line, reason, block.score)


def _missing_notes(answers: list[RepoAnswer]) -> list[str]:
    """One note per reason, naming the repositories it left out."""
    by_reason: dict[str, list[str]] = {}
    for answer in answers:
        if answer.result is None:
            by_reason.setdefault(answer.error or "no answer", []).append(answer.name)
    return [
        f"partial answer: {len(names)} repo(s) missing ({', '.join(names)}): {reason}"
        for reason, names in by_reason.items()
    ]


def fuse(answers: list[RepoAnswer], *, budget: int, encoding: str) -> Result:
    """The workspace's Result from each repository's (``answers``, any order)."""
    answers = sorted(answers, key=lambda a: a.index)
    answered = [a for a in answers if a.result is not None]
    blocks, dropped = _pack(_ranked(answers), budget, encoding)
    context = render_context(blocks)
    first = answered[0].result if answered else None
    notes: dict[str, str] = {}  # a note said by several repos is kept once, first name
    for answer in answered:
        for note in answer.result.fallbacks:
            notes.setdefault(note, f"[{answer.name}] {note}")
    return Result(
        blocks=blocks,
        context=context,
        tokens=count_tokens(context, encoding) if blocks else 0,
        queries=list(first.queries) if first else [],
        timings={f"repo {a.name}": a.result.timings.get("total", 0.0) for a in answered},
        router=first.router if first else "none",
        fallbacks=[*_missing_notes(answers), *notes.values()],
        skipped=[Skip(f"{a.name}/{s.path}", s.reason) for a in answered for s in a.result.skipped],
        dropped=[
            *dropped,
            *(replace(d, path=f"{a.name}/{d.path}") for a in answered for d in a.result.dropped),
        ],
        routes=dict(first.routes) if first else {},
        missing=[a.name for a in answers if a.result is None],
    )
