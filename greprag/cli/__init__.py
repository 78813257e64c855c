"""The ``greprag`` command line (typer). Heavy modules load only when a command runs.

One module per command group: ``retrieve`` (retrieve, queries), ``index`` (index, status),
``serve`` (mcp, serve), ``docs`` (search, ask); ``common`` holds the shared options, the exit
codes and the one-line error.
"""

from __future__ import annotations

import signal
import sys
from typing import Annotated

import typer

from greprag.cli import docs, index, retrieve, serve
from greprag.cli.common import EXIT_CODES, EXIT_INTERRUPTED

__all__ = ["app", "main"]

app = typer.Typer(
    name="greprag",
    help=(
        "Grep-first retrieval of repository context for code completion.\n\n"
        "Give a cursor (--file, --line, --column; --repo defaults to the repository "
        "around the file) and get back the cross-file definitions and usages a completion "
        "model needs, packed into a token budget. No index to build; offline by default. Or ask "
        "a question in plain words over the docs and code (greprag search, greprag ask)."
        "\n\nExamples:\n\n"
        "  greprag retrieve --file app/service.py --line 42 --column 16\n\n"
        "  greprag queries --file app/service.py --line 42\n\n"
        '  greprag search "how do I retry after a timeout"\n\n'
        "  greprag index && greprag retrieve -f app/service.py -l 42 --routes dense\n\n"
        "  greprag --install-completion          # shell completion for bash, zsh, fish"
    ),
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)
app.command(help=retrieve.RETRIEVE_HELP, epilog=EXIT_CODES)(retrieve.retrieve)
app.command(help=retrieve.QUERIES_HELP, epilog=EXIT_CODES)(retrieve.queries)
app.command("index", help=index.INDEX_HELP, epilog=EXIT_CODES)(index.index_command)
app.command("status", help=index.STATUS_HELP, epilog=EXIT_CODES)(index.status_command)
app.command(help=docs.SEARCH_HELP, epilog=EXIT_CODES)(docs.search)
app.command(help=docs.ASK_HELP, epilog=EXIT_CODES)(docs.ask)
app.command("mcp", epilog=EXIT_CODES)(serve.mcp_command)
app.command("serve", epilog=EXIT_CODES)(serve.serve_command)


def _version(value: bool) -> None:
    if value:
        from greprag import __version__

        typer.echo(f"greprag {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_version
        ),
    ] = False,
) -> None:
    """Grep-first retrieval of repository context for code completion."""


def main() -> None:
    """Entry point of the ``greprag`` script (and ``python -m greprag``).

    SIGPIPE gets its default action back, as for any Unix filter: ``greprag ... | head``
    ends quietly when the reader closes the pipe, rather than with Python's BrokenPipeError.
    """
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        app(prog_name="greprag")
    except KeyboardInterrupt:
        sys.stderr.write("greprag: error: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
