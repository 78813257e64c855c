"""Human-readable ``--explain`` report of a Result."""

from __future__ import annotations

from greprag.models import Result


def render_explain(result: Result) -> str:
    """Queries with hits, merged ranges, packed blocks, drops, skips and timings."""
    ex = result.explain
    out = ["", "== explain =="]
    ctx = ex.get("local_context", {})
    out.append(
        f"cursor: {ctx.get('path')}:{ctx.get('line')}:{ctx.get('column')} "
        f"lang={ctx.get('lang')} class={ctx.get('enclosing_class')} "
        f"function={ctx.get('enclosing_function')} empty_body={ctx.get('empty_body')}"
    )
    if ctx.get("imports_in_repo"):
        traced = ", ".join(f"{k} → {v}" for k, v in ctx["imports_in_repo"].items())
        out.append(f"imports traced: {traced}")
    out.append(f"router: {result.router}")
    out.append("queries (pattern | kind | purpose | weight | hits/files → kept | note):")
    for i, q in enumerate(ex.get("queries", []), 1):
        out.append(
            f"  {i:2d}. {q['pattern']} | {q['kind']} | {q['purpose']} | {q['weight']} | "
            f"{q['hits']}/{q['files']} → {q['kept']} | {q['note']}"
        )
    out.append(f"candidates: {ex.get('candidates', 0)}")
    for m in ex.get("merged", []):
        out.append(
            f"  merged {m['members']} hits into {m['path']}:{m['start_line']}-{m['end_line']} "
            f"(score {m['score']})"
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
