"""``greprag search``: plain-language questions over a repository's docs and code."""

from __future__ import annotations

from typing import Annotated

import typer

from greprag.cli.common import (
    CacheOpt,
    JsonOpt,
    RepoOpt,
    RoutesOpt,
    choice,
    fail,
    open_retriever,
    resolve_target,
    run,
)

__all__ = ["SEARCH_HELP", "search"]

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
    '  greprag search "QuerySet.select_related" -r . --kind docs --k 3 --json'
)
KINDS = ("all", "code", "docs")


def search(
    query: Annotated[str, typer.Argument(help="The question, in plain words.")],
    repo: RepoOpt = None,
    json_out: JsonOpt = False,
    budget: Annotated[int | None, typer.Option("--budget", "-b", help="Token budget.")] = None,
    k: Annotated[
        int | None, typer.Option("--k", "-k", help="Blocks at most (default: the docs profile's).")
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="all (default), code, or docs (docstrings count).")
    ] = "all",
    routes: RoutesOpt = None,
    cache_dir: CacheOpt = None,
) -> None:
    """Search a repository's documentation and code with a plain-language question."""
    if kind not in KINDS:
        fail(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    root, _ = resolve_target(repo, None)
    result = None
    if routes is None and cache_dir is None:
        from greprag.server.client import search_remote  # a running server may answer

        result = run(lambda: search_remote(root, query, budget=budget, k=k, kind=kind))
    if result is None:
        retriever = open_retriever(
            root,
            routes=choice(routes),
            cache_dir=str(cache_dir) if cache_dir else None,
            load_dense=choice(routes) == "dense",
        )
        result = run(lambda: retriever.search(query, budget=budget, k=k, kind=kind))
    from greprag import render

    for note in result.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)
    if json_out:
        typer.echo(render.render_json(result))
        return
    typer.echo(result.context, nl=False)
    typer.echo(f"greprag: {render.render_summary(result)}", err=True)
