"""The ``greprag`` command line (typer). Heavy modules load only when a command runs.

One module per command group: ``retrieve`` (retrieve, queries), ``index`` (index, status);
``common`` holds the shared options and the one-line error.
"""

from __future__ import annotations

import typer

from greprag.cli import index, retrieve

__all__ = ["app", "main"]

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
app.command(help=retrieve.RETRIEVE_HELP)(retrieve.retrieve)
app.command(help=retrieve.QUERIES_HELP)(retrieve.queries)
app.command("index")(index.index_command)
app.command("status")(index.status_command)


def main() -> None:
    """Entry point of the ``greprag`` script."""
    app()
