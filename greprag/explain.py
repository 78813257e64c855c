"""The ``Explain`` record of a retrieval: the cursor as understood, each query's hits, merges."""

from __future__ import annotations

from greprag.context import LocalContext
from greprag.fusion.dedup import MergedRange
from greprag.models import Explain, MergeReport, QueryPlan, QueryReport
from greprag.routes import QueryStats

__all__ = ["explain_retrieval"]


def explain_retrieval(
    ctx: LocalContext,
    imported: dict[str, str],
    plan: QueryPlan,
    stats: list[QueryStats],
    candidates: int,
    emitted: list[MergedRange],
    shown: tuple[tuple[int, int], ...] = (),
) -> Explain:
    """What ``--explain`` shows; ``stats`` has one entry per query of ``plan``, ``shown``
    the runs of the cursor's file that blocks may come from (``CursorFile.runs``)."""
    by_index = {st.index: st for st in stats}
    queries = []
    for i, q in enumerate(plan.queries):
        st = by_index.get(i, QueryStats(i))
        queries.append(
            QueryReport(
                q.pattern,
                q.kind,
                q.purpose,
                round(q.weight, 3),
                st.hits,
                st.files,
                st.kept,
                st.note,
            )
        )
    return Explain(
        local_context={
            "path": ctx.path,
            "lang": ctx.lang,
            "line": ctx.line,
            "column": ctx.column,
            "enclosing_class": ctx.enclosing_class,
            "enclosing_function": ctx.enclosing_function,
            "class_bases": ctx.class_bases,
            "empty_body": ctx.empty_body,
            "imports_in_repo": imported,
            "current_file_shown": [list(run) for run in shown],
        },
        queries=queries,
        candidates=candidates,
        merged=[
            MergeReport(r.path, r.start_line, r.end_line, r.members, round(r.score, 4))
            for r in emitted
            if r.members > 1
        ],
    )
