"""``greprag search`` and ``greprag ask``: plain-language questions over a repository's
docs and code; ``ask`` answers them with a model, citing what search found."""

from __future__ import annotations

from typing import Annotated

import typer

from greprag.cli.common import (
    CacheOpt,
    JsonOpt,
    RepoOpt,
    RouterOpt,
    RoutesOpt,
    choice,
    fail,
    open_retriever,
    resolve_target,
    run,
    show_result,
)
from greprag.cli.workspace import RayAddressOpt, RayOpt, WorkspaceOpt, workspace_result

__all__ = ["ASK_HELP", "SEARCH_HELP", "ask", "search"]

SEARCH_HELP = (
    "Search a repository's documentation and code with a plain-language question.\n\n"
    "Prints the best sections and definitions, each under a comment naming its file and "
    "lines (and path#anchor for HTML pages), within the token budget; a one-line summary "
    "goes to stderr. Markdown, reStructuredText, plain text, HTML manuals and docstrings "
    "are read as sections. Without --repo the root is the nearest folder above the working "
    "directory holding .git (or .hg, .svn, .greprag.toml). A running server (greprag "
    "serve) for the repository answers when neither --routes nor --cache-dir is given. "
    "The dense route joins when the repo has an index (greprag index) and its model is "
    "loaded: in a server, or with --routes dense (a one-shot call otherwise skips the "
    "load, seconds, and says so). What docs mode changes is documented in "
    "configs/docs.toml.\n\n"
    "Examples:\n\n"
    '  greprag search "how do I retry a request after a timeout" --repo .\n\n'
    '  greprag search "QuerySet.select_related" -r . --kind docs --k 3 --json\n\n'
    '  greprag search "where do we validate webhook signatures" --workspace team.toml'
)
ASK_HELP = (
    "Answer a question about a repository from its docs and code, citing the passages.\n\n"
    "Searches as greprag search does, then asks the configured model (any litellm name: "
    "--model, $GREPRAG_MODEL, or model in the user config; never the repository's config) "
    "to answer from those passages only. The answer streams to stdout; each citation "
    "(path:start-end or page.html#anchor, in square brackets) is checked against the "
    "passages given, and "
    "one that names anything else is removed and reported on stderr. The cited sources "
    "follow the answer. Repository text reaches the model as quoted data: instructions "
    "inside it are not followed, and nothing the model says is run.\n\n"
    "Without a model, prints the passages that would answer (exit 0). If the model fails "
    "(timeout: answer_timeout, HTTP error), says so in one line, prints the passages, and "
    "exits 3.\n\n"
    "With --workspace, the question goes to every repository of the workspace file and "
    "citations name the repository: [repo/path:start-end].\n\n"
    "Examples:\n\n"
    '  greprag ask "how do I retry a request after a timeout" --repo .\n\n'
    '  GREPRAG_MODEL=openai/gpt-4o-mini greprag ask "where are webhooks verified?" -r . --json'
)
KINDS = ("all", "code", "docs")
KindOpt = Annotated[
    str, typer.Option("--kind", help="all (default), code, or docs (docstrings count).")
]
BudgetOpt = Annotated[int | None, typer.Option("--budget", "-b", help="Token budget.")]
KOpt = Annotated[
    int | None, typer.Option("--k", "-k", help="Blocks at most (default: the docs profile's).")
]


def search(
    query: Annotated[str, typer.Argument(help="The question, in plain words.")],
    repo: RepoOpt = None,
    json_out: JsonOpt = False,
    budget: BudgetOpt = None,
    k: KOpt = None,
    kind: KindOpt = "all",
    routes: RoutesOpt = None,
    cache_dir: CacheOpt = None,
    router: RouterOpt = None,
    workspace: WorkspaceOpt = None,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
) -> None:
    """Search a repository's documentation and code with a plain-language question."""
    if kind not in KINDS:
        fail(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if workspace is not None:
        from greprag.workspace import SearchCall

        result = workspace_result(
            workspace,
            SearchCall(query, kind, k),
            budget=budget,
            ray=ray,
            ray_address=ray_address,
            load_dense=choice(routes) == "dense",
            routes=choice(routes),
            router=choice(router),
            cache_dir=str(cache_dir) if cache_dir else None,
        )
        show_result(result, json_out)
        return
    root, _ = resolve_target(repo, None)
    result = None
    if routes is None and cache_dir is None and router is None:
        from greprag.server.client import search_remote  # a running server may answer

        result = run(lambda: search_remote(root, query, budget=budget, k=k, kind=kind))
    if result is None:
        retriever = open_retriever(
            root,
            routes=choice(routes),
            router=choice(router),
            cache_dir=str(cache_dir) if cache_dir else None,
            load_dense=choice(routes) == "dense",
        )
        result = run(lambda: retriever.search(query, budget=budget, k=k, kind=kind))
    show_result(result, json_out)


def ask(
    question: Annotated[str, typer.Argument(help="The question, in plain words.")],
    repo: RepoOpt = None,
    json_out: JsonOpt = False,
    model: Annotated[
        str | None, typer.Option("--model", help="litellm model that answers (default: model).")
    ] = None,
    budget: BudgetOpt = None,
    k: KOpt = None,
    kind: KindOpt = "all",
    router: RouterOpt = None,
    workspace: WorkspaceOpt = None,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = None,
) -> None:
    """Answer a question about a repository from its docs and code, citing the passages."""
    if kind not in KINDS:
        fail(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    from greprag import render

    def show(text: str) -> None:
        typer.echo(text, nl=False)

    stream = None if json_out else show
    if workspace is not None:
        from docs_mode.ask import answer_with_settings
        from greprag.config import load_settings
        from greprag.workspace import SearchCall

        result = workspace_result(
            workspace,
            SearchCall(question, kind, k),
            budget=budget,
            ray=ray,
            ray_address=ray_address,
            router=choice(router),
        )
        settings = run(lambda: load_settings(model=model))  # the user's: model, API, limit
        got = answer_with_settings(question, result, settings, on_text=stream)
    else:
        root, _ = resolve_target(repo, None)
        retriever = open_retriever(root, router=choice(router), model=model)
        got = run(
            lambda: retriever.ask(
                question, model=model, budget=budget, k=k, kind=kind, on_text=stream
            )
        )
    for note in [*got.result.fallbacks, *got.notes]:
        typer.echo(f"greprag: note: {note}", err=True)
    if json_out:
        typer.echo(render.render_answer_json(got))
    elif got.error is None:
        typer.echo("\n\n" + render.render_sources(got), nl=False)
    else:
        typer.echo(("\n\n" if got.text else "") + got.result.context, nl=False)
    if got.error is None:
        return
    if got.model is None:  # none configured: the passages are the answer
        typer.echo(f"greprag: note: {got.error}; printed the passages that would answer", err=True)
        return
    typer.echo(f"greprag: error: {got.error}", err=True)
    raise typer.Exit(3)
