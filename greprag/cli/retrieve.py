"""``greprag retrieve`` and ``greprag queries``: context for a cursor, or its query plan."""

from __future__ import annotations

__all__ = ["QUERIES_HELP", "RETRIEVE_HELP", "queries", "retrieve"]

from typing import Annotated

import typer

from greprag.cli.common import (
    CacheOpt,
    ColumnOpt,
    FileOpt,
    JsonOpt,
    LanguageOpt,
    LineOpt,
    ModelOpt,
    RepoOpt,
    RouterOpt,
    RoutesOpt,
    StdinOpt,
    choice,
    cursor_inputs,
    fail,
    open_retriever,
    resolve_target,
    run,
    show_result,
)
from greprag.cli.workspace import RayAddressOpt, RayOpt, WorkspaceOpt, workspace_result

RETRIEVE_HELP = (
    "Retrieve cross-file context for a cursor and print it (or --json).\n\n"
    "The context goes to stdout, each block under a comment naming its file and lines; "
    "notes, --explain and a one-line summary (blocks, tokens, milliseconds) go to stderr. "
    "Without --repo the root is the nearest folder above the file holding .git (or .hg, "
    ".svn, .greprag.toml). Settings not given here come from the user config, the repo's "
    ".greprag.toml, then the defaults (budget 4096). In the default --routes auto a "
    "one-shot call skips the dense model load (seconds) and says so: pass --routes dense "
    "to pay it.\n\n"
    "Examples:\n\n"
    "  greprag retrieve --file app/service.py --line 42 --column 16\n\n"
    "  greprag retrieve -r . -f app/service.py -l 42 --json | jq '.blocks[].path'\n\n"
    "  head -n 41 app/service.py | greprag retrieve --stdin --file app/service.py\n\n"
    "  greprag retrieve -f app/service.py -l 42 --explain 2> why.txt\n\n"
    "  head -n 41 app/service.py | greprag retrieve --stdin --workspace team.toml --json"
)
QUERIES_HELP = (
    "Print the ripgrep query plan for a cursor, without running it.\n\n"
    "Each line shows the query's kind (class, method, variable, other), its purpose "
    "(definition, usage, wildcard, import) and weight, and the rg command it stands for, "
    "ready to paste into a shell at the repository root.\n\n"
    "Examples:\n\n"
    "  greprag queries --file app/service.py --line 42\n\n"
    "  greprag queries -f app/service.py -l 42 --json | jq '.queries[].pattern'"
)


def _require_model(retriever) -> None:
    """``--router llm`` (or ``router = "llm"``) asked for with no model: unavailable."""
    from greprag.llm import NO_MODEL

    if retriever.settings.router == "llm" and not retriever.settings.model:
        fail(f"--router llm: {NO_MODEL}", 3)


def retrieve(
    repo: RepoOpt = None,
    file: FileOpt = None,
    line: LineOpt = None,
    column: ColumnOpt = None,
    budget: Annotated[int | None, typer.Option("--budget", "-b", help="Token budget.")] = None,
    router: RouterOpt = None,
    model: ModelOpt = None,
    routes: RoutesOpt = None,
    json_out: JsonOpt = False,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show queries, hits, scores, merges and drops (on stderr)."),
    ] = False,
    stdin: StdinOpt = False,
    language: LanguageOpt = None,
    cache_dir: CacheOpt = None,
    workspace: WorkspaceOpt = None,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
) -> None:
    """Retrieve cross-file context for a cursor and print it (or --json)."""
    if workspace is not None:
        if not stdin or repo is not None or line is not None:
            fail("--workspace takes the code before the cursor on --stdin (no --repo, --line)")
        call = _left_context_call(cursor_inputs(None, None, None, stdin, language))
        result = workspace_result(
            workspace,
            call,
            budget=budget,
            ray=ray,
            ray_address=ray_address,
            load_dense=choice(routes) == "dense",
            router=choice(router),
            model=model,
            routes=choice(routes),
            cache_dir=str(cache_dir) if cache_dir else None,
        )
        show_result(result, json_out, explain=explain)
        return
    root, file = resolve_target(repo, file)
    inputs = cursor_inputs(file, line, column, stdin, language)
    result = None
    if router is None and model is None and routes is None and cache_dir is None:
        from greprag.server.client import retrieve_remote  # a running server may answer

        result = run(lambda: retrieve_remote(root, inputs, budget=budget, explain=explain))
    if result is None:
        retriever = open_retriever(
            root,
            budget=budget,
            router=choice(router),
            model=model,
            routes=choice(routes),
            cache_dir=str(cache_dir) if cache_dir else None,
            load_dense=choice(routes) == "dense",
        )
        _require_model(retriever)
        result = run(lambda: retriever.retrieve(**inputs))
    show_result(result, json_out, explain=explain)


def _left_context_call(inputs: dict):  # -> greprag.workspace.RetrieveCall
    from greprag.workspace import RetrieveCall

    return RetrieveCall(inputs["left_context"], inputs["language"])


def queries(
    repo: RepoOpt = None,
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
    root, file = resolve_target(repo, file)
    inputs = cursor_inputs(file, line, column, stdin, language)
    retriever = open_retriever(root, router=choice(router), model=model)
    _require_model(retriever)
    plan = run(lambda: retriever.plan(**inputs))
    from greprag import render

    if json_out:
        typer.echo(render.render_plan_json(plan))
    else:
        typer.echo(render.render_plan(plan, retriever.grep.rg if retriever.grep else "rg"))
    for note in plan.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)
