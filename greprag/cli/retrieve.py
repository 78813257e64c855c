"""``greprag retrieve`` and ``greprag queries``: context for a cursor, or its query plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from greprag.cli.common import (
    ColumnOpt,
    FileOpt,
    JsonOpt,
    LanguageOpt,
    LineOpt,
    ModelOpt,
    RepoOpt,
    RouterOpt,
    StdinOpt,
    cursor_inputs,
    open_retriever,
    run,
)

RETRIEVE_HELP = (
    "Retrieve cross-file context for a cursor and print it (or --json).\n\n"
    "The context goes to stdout, each block under a comment naming its file and lines; "
    "a one-line summary (blocks, tokens, milliseconds) goes to stderr. Settings not given "
    "here come from the repo's .greprag.toml, then the defaults (budget 4096).\n\n"
    "Examples:\n\n"
    "  greprag retrieve --repo . --file app/service.py --line 42 --column 16\n\n"
    "  greprag retrieve -r . -f app/service.py -l 42 --json | jq '.blocks[].path'\n\n"
    "  head -n 41 app/service.py | greprag retrieve -r . --stdin --language python"
)
QUERIES_HELP = (
    "Print the ripgrep query plan for a cursor, without running it.\n\n"
    "Each line shows the query's kind (class, method, variable, other), its purpose "
    "(definition, usage, wildcard, import) and weight, and the rg command it stands for."
)


def retrieve(
    repo: RepoOpt = Path("."),
    file: FileOpt = None,
    line: LineOpt = None,
    column: ColumnOpt = None,
    budget: Annotated[int | None, typer.Option("--budget", "-b", help="Token budget.")] = None,
    router: RouterOpt = None,
    model: ModelOpt = None,
    routes: Annotated[
        str | None,
        typer.Option(
            "--routes",
            help="grep, dense or auto (default): auto adds the dense route when grep "
            "evidence is weak and the repo has a dense index (greprag index).",
        ),
    ] = None,
    json_out: JsonOpt = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show queries, hits, scores, merges and drops.")
    ] = False,
    stdin: StdinOpt = False,
    language: LanguageOpt = None,
) -> None:
    """Retrieve cross-file context for a cursor and print it (or --json)."""
    inputs = cursor_inputs(file, line, column, stdin, language)
    retriever = open_retriever(repo, budget=budget, router=router, model=model, routes=routes)
    result = run(lambda: retriever.retrieve(**inputs))
    from greprag import render

    for note in result.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)
    if json_out:
        typer.echo(render.render_json(result, explain=explain))
        return
    typer.echo(result.context, nl=False)
    if explain:
        typer.echo("\n" + render.render_explain(result))
    typer.echo(f"greprag: {render.render_summary(result)}", err=True)


def queries(
    repo: RepoOpt = Path("."),
    file: FileOpt = None,
    line: LineOpt = None,
    column: ColumnOpt = None,
    router: RouterOpt = None,
    model: ModelOpt = None,
    json_out: JsonOpt = False,
    stdin: StdinOpt = False,
    language: LanguageOpt = None,
) -> None:
    """Print the ripgrep query plan for a cursor, without running it."""
    inputs = cursor_inputs(file, line, column, stdin, language)
    retriever = open_retriever(repo, router=router, model=model)
    plan = run(lambda: retriever.plan(**inputs))
    from greprag import render

    if json_out:
        typer.echo(render.render_plan_json(plan))
    else:
        typer.echo(render.render_plan(plan, retriever.grep.rg if retriever.grep else "rg"))
    for note in plan.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)
