"""The ``greprag`` command line (typer). Heavy modules load only when a command runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(
    name="greprag",
    help=(
        "Grep-first retrieval of repository context for code completion.\n\n"
        "Give a cursor (--repo, --file, --line, --column) and get back the cross-file "
        "definitions and usages a completion model needs, packed into a token budget. "
        "No index to build; offline by default."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

RepoOpt = Annotated[Path, typer.Option("--repo", "-r", help="Repository root.", show_default=True)]
FileOpt = Annotated[
    Path | None,
    typer.Option("--file", "-f", help="File under the cursor (relative to --repo, or absolute)."),
]
LineOpt = Annotated[int | None, typer.Option("--line", "-l", help="Cursor line, 1-based.")]
ColumnOpt = Annotated[
    int | None,
    typer.Option("--column", "-c", help="Cursor column, 0-based (default: end of the line)."),
]
StdinOpt = Annotated[
    bool,
    typer.Option("--stdin", help="Read the left context (code before the cursor) from stdin."),
]
LanguageOpt = Annotated[
    str | None, typer.Option("--language", help="Language of --stdin text (python, java, ...).")
]
RouterOpt = Annotated[
    str | None,
    typer.Option("--router", help="offline (default) or llm (needs --model or $GREPRAG_MODEL)."),
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="litellm model for --router llm.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (stable keys).")]


def _fail(message: str) -> None:
    typer.echo(f"greprag: error: {message}", err=True)
    raise typer.Exit(2)


def _retriever(repo: Path, **settings: Any):
    from greprag.errors import GrepRAGError
    from greprag.pipeline import Retriever

    try:
        return Retriever(repo, **settings)
    except GrepRAGError as exc:
        _fail(exc.reason)


def _inputs(
    file: Path | None, line: int | None, column: int | None, stdin: bool, language: str | None
) -> dict[str, Any]:
    if stdin:
        return {"left_context": sys.stdin.read(), "language": language}
    if file is None or line is None:
        _fail("give --file and --line (or --stdin with the code before the cursor)")
    return {"file": file, "line": line, "column": column, "language": language}


def _run(call):
    from greprag.errors import GrepRAGError

    try:
        return call()
    except GrepRAGError as exc:
        _fail(exc.reason)
    except OSError as exc:
        _fail(f"{exc.filename or 'I/O'}: {exc.strerror or exc}")


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


@app.command(help=RETRIEVE_HELP)
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
    inputs = _inputs(file, line, column, stdin, language)
    retriever = _retriever(repo, budget=budget, router=router, model=model, routes=routes)
    result = _run(lambda: retriever.retrieve(**inputs))
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


@app.command(help=QUERIES_HELP)
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
    inputs = _inputs(file, line, column, stdin, language)
    retriever = _retriever(repo, router=router, model=model)
    plan = _run(lambda: retriever.plan(**inputs))
    from greprag import render

    if json_out:
        typer.echo(render.render_plan_json(plan))
    else:
        typer.echo(render.render_plan(plan, retriever.grep.rg if retriever.grep else "rg"))
    for note in plan.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)


def _register_optional() -> None:
    try:
        from greprag.cli_index import register
    except ImportError:
        return
    register(app)


_register_optional()


def main() -> None:
    """Entry point of the ``greprag`` script."""
    app()
