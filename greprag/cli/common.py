"""What every command shares: option types, the one-line error, running library calls."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

__all__ = [
    "ColumnOpt",
    "FileOpt",
    "JsonOpt",
    "LanguageOpt",
    "LineOpt",
    "ModelOpt",
    "RepoOpt",
    "RouterOpt",
    "StdinOpt",
    "cursor_inputs",
    "fail",
    "open_retriever",
    "run",
]

T = TypeVar("T")

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


def fail(message: str) -> NoReturn:
    """One line on stderr, exit code 2: bad input or configuration."""
    typer.echo(f"greprag: error: {message}", err=True)
    raise typer.Exit(2)


def run(call: Callable[[], T]) -> T:
    """``call()``, with any GrepRAG or I/O error turned into one line and exit code 2."""
    from greprag.errors import GrepRAGError

    try:
        return call()
    except GrepRAGError as exc:
        fail(exc.reason)
    except OSError as exc:
        fail(f"{exc.filename or 'I/O'}: {exc.strerror or exc}")


def open_retriever(repo: Path, **settings: Any):  # -> greprag.pipeline.Retriever
    """A Retriever for ``repo`` with the given settings (None values ignored)."""
    from greprag.pipeline import Retriever

    return run(lambda: Retriever(repo, **settings))


def cursor_inputs(
    file: Path | None, line: int | None, column: int | None, stdin: bool, language: str | None
) -> dict[str, Any]:
    """The cursor as ``Retriever.retrieve`` keywords, from flags or stdin."""
    if stdin:
        return {"left_context": sys.stdin.read(), "language": language}
    if file is None or line is None:
        fail("give --file and --line (or --stdin with the code before the cursor)")
    return {"file": file, "line": line, "column": column, "language": language}
