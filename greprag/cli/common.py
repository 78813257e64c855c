"""What every command shares: option types, exit codes, the one-line error, the repo root."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

__all__ = [
    "EXIT_CODES",
    "CacheOpt",
    "ColumnOpt",
    "FileOpt",
    "JsonOpt",
    "LanguageOpt",
    "LineOpt",
    "ModelOpt",
    "RepoOpt",
    "RouterChoice",
    "RouterOpt",
    "RoutesChoice",
    "RoutesOpt",
    "StdinOpt",
    "choice",
    "cursor_inputs",
    "fail",
    "find_root",
    "open_retriever",
    "resolve_target",
    "run",
    "show_result",
]

T = TypeVar("T")

# Exit statuses, shown under every command's help; ``greprag.errors`` maps each error to one.
EXIT_CODES = "\n\n".join(
    [
        "Exit status:",
        "  0  success",
        "  1  status: no usable dense index (none yet, damaged or outdated)",
        "  2  bad input or usage: unknown option, file outside the repository, bad setting",
        "  3  a requested feature is unavailable: --routes dense without the extra or an "
        "index, --router llm without a model, no rg",
        "  4  I/O failure: cache not writable, disk full, rg crashed or timed out",
        "  130  interrupted (Ctrl-C); 141 the reader closed the pipe (as with | head)",
    ]
)
EXIT_IO = 4
EXIT_INTERRUPTED = 130

# What marks a repository root when --repo is not given (walking up from --file or cwd).
ROOT_MARKERS = (".git", ".hg", ".svn", ".greprag.toml")

RepoOpt = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        "-r",
        help="Repository root (default: the nearest folder above --file, or above the "
        "working directory, holding .git, .hg, .svn or .greprag.toml).",
        show_default=False,
    ),
]
FileOpt = Annotated[
    Path | None,
    typer.Option(
        "--file",
        "-f",
        help="File under the cursor (relative to --repo when given, else to the working "
        "directory; or absolute). With --stdin: names the buffer (language, and its own "
        "lines are left out).",
    ),
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


class RouterChoice(StrEnum):
    """``--router`` values (the ``router`` setting's choices)."""

    offline = "offline"
    llm = "llm"


class RoutesChoice(StrEnum):
    """``--routes`` values (the ``routes`` setting's choices)."""

    grep = "grep"
    dense = "dense"
    auto = "auto"


RouterOpt = Annotated[
    RouterChoice | None,
    typer.Option(
        "--router",
        help="Query planner: offline (default) or llm (needs --model or $GREPRAG_MODEL).",
    ),
]
RoutesOpt = Annotated[
    RoutesChoice | None,
    typer.Option(
        "--routes",
        help="grep, dense or auto (default): auto adds the dense route when grep evidence "
        "is weak and the repo has a dense index (greprag index); dense requires one.",
    ),
]
ModelOpt = Annotated[str | None, typer.Option("--model", help="litellm model for --router llm.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON (stable keys).")]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Cache root, the same as $GREPRAG_CACHE_DIR (default: $XDG_CACHE_HOME/greprag "
        "or ~/.cache/greprag); dense indexes live in its dense/ folder.",
    ),
]


def choice(value: Enum | None) -> str | None:
    """An enum option's plain value (None stays None)."""
    return None if value is None else str(value.value)


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr and exit ``code`` (2: bad input or configuration)."""
    typer.echo(f"greprag: error: {' '.join(message.split())}", err=True)
    raise typer.Exit(code)


def run(call: Callable[[], T]) -> T:
    """``call()``, with any GrepRAG or I/O error turned into one line and its exit code."""
    from greprag.errors import GrepRAGError

    try:
        return call()
    except GrepRAGError as exc:
        fail(exc.reason, exc.exit_code)
    except OSError as exc:
        fail(f"{exc.filename or 'I/O'}: {exc.strerror or exc}", EXIT_IO)
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``ROOT_MARKERS`` entry."""
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return None


def resolve_target(repo: Path | None, file: Path | None) -> tuple[Path, Path | None]:
    """The repository root and the cursor file, from the flags.

    With ``--repo``, ``--file`` is relative to it (or absolute). Without, ``--file`` is
    relative to the working directory and the root is found by walking up from the file
    (or the working directory) to the nearest ``ROOT_MARKERS`` folder; with none, the
    working directory, or the file's folder when the file lies outside it.
    """
    if repo is not None:
        return repo, file
    cwd = Path(os.getcwd())
    absolute = None if file is None else (file if file.is_absolute() else cwd / file)
    start = absolute.parent if absolute is not None else cwd
    root = find_root(start.resolve()) if start.exists() else None
    if root is None:
        inside_cwd = absolute is None or absolute.resolve().is_relative_to(cwd.resolve())
        root = cwd if inside_cwd or absolute is None else absolute.parent
    return root, absolute


def open_retriever(repo: Path, **settings: Any):  # -> greprag.pipeline.Retriever
    """A Retriever for ``repo`` with the given settings (None values ignored)."""
    from greprag.pipeline import Retriever

    return run(lambda: Retriever(repo, **settings))


def _read_stdin() -> str:
    """stdin as text, whatever the locale: bytes read and decoded like a repo file."""
    from greprag.files import decode_text, is_binary

    data = sys.stdin.buffer.read()
    if is_binary(data):
        fail("stdin holds binary data, not code")
    return decode_text(data)


def cursor_inputs(
    file: Path | None, line: int | None, column: int | None, stdin: bool, language: str | None
) -> dict[str, Any]:
    """The cursor as ``Retriever.retrieve`` keywords, from flags or stdin (then ``file``
    names the buffer: its language, and its lines are left out)."""
    if stdin:
        return {"left_context": _read_stdin(), "file": file, "language": language}
    if file is None or line is None:
        fail("give --file and --line (or --stdin with the code before the cursor)")
    return {"file": file, "line": line, "column": column, "language": language}


def show_result(result: Any, json_out: bool, *, explain: bool = False) -> None:
    """A Result on stdout (the context, or JSON); notes, ``explain`` and the one-line
    summary on stderr."""
    from greprag import render

    for note in result.fallbacks:
        typer.echo(f"greprag: note: {note}", err=True)
    if json_out:
        typer.echo(render.render_json(result, explain=explain))
        return
    typer.echo(result.context, nl=False)
    if explain:
        typer.echo(render.render_explain(result), err=True)
    typer.echo(f"greprag: {render.render_summary(result)}", err=True)
