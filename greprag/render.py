"""One rendering layer: a Result or a plan as prompt text, JSON, ``--explain`` text and
summaries. The CLI uses it now; the servers use the same functions, so every front end
says the same thing the same way.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from greprag.languages import get_language, language_for_path
from greprag.models import Block, QueryPlan, Result
from greprag.rg import rg_pattern

if TYPE_CHECKING:
    from docs_mode.ask import Answer

__all__ = [
    "block_text",
    "render_answer_json",
    "render_context",
    "render_explain",
    "render_json",
    "render_plan",
    "render_plan_json",
    "render_sources",
    "render_summary",
]


def _comment(path: str) -> str:
    lang = language_for_path(path)
    return lang.line_comment if lang else "#"


def block_text(block: Block) -> str:
    """One block as it goes into the prompt: a comment naming its file and lines, then it."""
    return f"{block.header(_comment(block.path))}\n{block.text}\n"


def render_context(blocks: list[Block]) -> str:
    """The prompt-ready context: each block under a comment naming its file and lines."""
    return "\n".join(block_text(b) for b in blocks)


def render_json(result: Result, *, explain: bool = False) -> str:
    """``Result.to_dict()`` as indented JSON, with ``explain`` when asked for."""
    payload = result.to_dict()
    if explain and result.explain is not None:
        payload["explain"] = result.explain.to_dict()
    return json.dumps(payload, indent=2)


def render_summary(result: Result) -> str:
    """One line: blocks, tokens, milliseconds, router."""
    return (
        f"{len(result.blocks)} blocks, {result.tokens} tokens, "
        f"{result.timings.get('total', 0):.1f} ms, router {result.router}"
    )


def render_explain(result: Result) -> str:
    """Queries with hits, merged ranges, packed blocks, drops, skips and timings."""
    out = ["== explain =="]
    ex = result.explain
    if ex is not None:
        ctx = ex.local_context
        out.append(
            f"cursor: {ctx.get('path')}:{ctx.get('line')}:{ctx.get('column')} "
            f"lang={ctx.get('lang')} class={ctx.get('enclosing_class')} "
            f"function={ctx.get('enclosing_function')} empty_body={ctx.get('empty_body')}"
        )
        if ctx.get("imports_in_repo"):
            traced = ", ".join(f"{k} → {v}" for k, v in ctx["imports_in_repo"].items())
            out.append(f"imports traced: {traced}")
        if ctx.get("path"):
            runs = ", ".join(f"{low}-{high}" for low, high in ctx.get("current_file_shown", []))
            out.append(f"current file shown: {'lines ' + runs if runs else 'none of it'}")
    out.append(f"router: {result.router}")
    if ex is not None:
        out.append("queries (pattern | kind | purpose | weight | hits/files → kept | note):")
        for i, q in enumerate(ex.queries, 1):
            out.append(
                f"  {i:2d}. {q.pattern} | {q.kind} | {q.purpose} | {q.weight} | "
                f"{q.hits}/{q.files} → {q.kept} | {q.note}"
            )
        out.append(f"candidates: {ex.candidates}")
        for m in ex.merged:
            out.append(
                f"  merged {m.members} hits into {m.path}:{m.start_line}-{m.end_line} "
                f"(score {m.score})"
            )
    out.append("blocks (score | tokens):")
    for b in result.blocks:
        kind = " outline" if b.outline else ""
        out.append(f"  {b.path}:{b.start_line}-{b.end_line}{kind} | {b.score} | {b.tokens}")
    for d in result.dropped:
        out.append(f"  dropped {d.path}:{d.start_line}-{d.end_line} ({d.score}): {d.reason}")
    for s in result.skipped:
        out.append(f"  skipped {s.path}: {s.reason}")
    for note in result.fallbacks:
        out.append(f"  fallback: {note}")
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in result.timings.items())
    out.append(f"timings: {timings}")
    return "\n".join(out)


def render_plan_json(plan: QueryPlan) -> str:
    """The plan as ``greprag queries --json`` prints it."""
    return json.dumps(
        {
            "router": plan.router,
            "queries": [q.to_dict() for q in plan.queries],
            "synonyms": plan.synonyms,
            "fallbacks": plan.fallbacks,
        },
        indent=2,
    )


def render_plan(plan: QueryPlan, rg: Path | str = "rg") -> str:
    """One line per query: kind, purpose, weight, and an rg command that runs as pasted."""
    lines = []
    for i, q in enumerate(plan.queries, 1):
        lang = get_language(q.lang)
        argv = [str(rg), "--no-config", "--no-unicode", "-n"]
        if lang is not None:
            argv += ["--type", lang.rg_type]
        if q.fixed:
            argv.append("-F")
        argv += ["-e", q.pattern if q.fixed else rg_pattern(q.pattern)]
        if q.paths:
            argv += ["--", *q.paths]
        lines.append(f"{i:2d}. [{q.kind:8s} {q.purpose:10s} w={q.weight:.2f}] {shlex.join(argv)}")
    return "\n".join(lines)


def render_sources(answer: Answer) -> str:
    """The lines after a streamed answer: what it cited, else what it was given."""
    if answer.citations:
        return "Sources:\n" + "".join(f"  [{c.label}]\n" for c in answer.citations)
    from docs_mode.ask import cite_label

    given = "".join(f"  [{cite_label(b)}]\n" for b in answer.result.blocks)
    return "Sources: none cited; the passages given were:\n" + given


def render_answer_json(answer: Answer) -> str:
    """``Answer.to_dict()`` as indented JSON (``greprag ask --json``)."""
    return json.dumps(answer.to_dict(), indent=2)
