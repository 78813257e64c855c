"""What a language analyzer reports about a project: definitions and resolved name uses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path

# not the tail of a number: the ``L`` of ``73L``, the ``x19`` of ``0x19``, the ``e5`` of ``1e5``
IDENT_RE = re.compile(r"(?<![0-9])[A-Za-z_$][A-Za-z0-9_$]*")

# Methods of builtin containers and strings: a repository method of the same name is no
# evidence that a call site resolves to it.
_LIBRARY_METHODS = """
close open read write flush get set put add remove clear run start stop next send
call apply bind then map filter forEach push pop shift slice splice join split concat
equals hashCode toString length size isEmpty contains iterator compareTo clone
getName getValue setValue valueOf of from subscribe pipe emit handle reset update
"""
COMMON_METHODS = frozenset(
    name for kind in (str, bytes, list, dict, set, tuple, object, int, float) for name in dir(kind)
) | frozenset(_LIBRARY_METHODS.split())

_STDLIB_MODULES = """
asyncio collections contextlib datetime decimal email enum functools http.client http.cookies
inspect io json logging os pathlib platform queue re socket ssl string subprocess tempfile
threading time types typing unittest urllib.parse urllib.request uuid warnings zipfile
"""


@cache
def stdlib_attributes() -> frozenset[str]:
    """Public functions and class attributes of common stdlib modules (Python call sites
    using these names may well not be calling a project method)."""
    names: set[str] = set()
    for module_name in _STDLIB_MODULES.split():
        module = import_module(module_name)
        for value in vars(module).values():
            names.update(dir(value) if isinstance(value, type) else ())
        names.update(vars(module))
    return frozenset(names)


@dataclass(frozen=True)
class Location:
    """A definition: ``line`` is its header line (the line naming it), inside the range."""

    path: str
    line: int
    start_line: int
    end_line: int


Target = tuple[Location, ...]  # alternatives (overloads, conditional definitions): any one counts


@dataclass(frozen=True)
class Use:
    """A resolved use of a repository name at a cursor (1-based line, 0-based char column).

    ``kind`` is ``import`` (a name the file imports from another project file) or
    ``implicit`` (a method call whose class the file never names). ``gold`` locates the
    definition of ``name`` (of the module member for namespace uses), ``member_gold`` the
    accessed member for ``Name.attr``.
    """

    path: str
    line: int
    column: int
    name: str
    member: str | None
    gold: Target
    member_gold: Target
    is_call: bool
    first: bool
    kind: str = "import"


@dataclass(frozen=True)
class Body:
    """A function or method body to write: the cursor sits at ``line``/``column`` (1-based
    line, 0-based char column: the first non-blank line after the signature and its
    docstring), and the body runs to ``end_line``/``end_column`` (exclusive char column)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    name: str


# Body tasks: bodies of this many lines (cursor line to last line, inclusive).
BODY_MIN_LINES = 2
BODY_MAX_LINES = 30


def body_size_ok(line: int, end_line: int) -> bool:
    return BODY_MIN_LINES <= end_line - line + 1 <= BODY_MAX_LINES


def first_code_line(lines: list[str], after: int, before: int) -> int | None:
    """The first non-blank line (1-based) strictly after ``after`` and before ``before``."""
    for number in range(after + 1, before):
        if lines[number - 1].strip():
            return number
    return None


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def char_column(line_text: str, byte_column: int) -> int:
    """A 0-based byte offset into a line as a character offset."""
    return len(line_text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


def identifiers(text: str) -> set[str]:
    return set(IDENT_RE.findall(text))


def rest_of_line(source_lines: list[str], line: int, column: int) -> str:
    return source_lines[line - 1][column:].rstrip()


def first_positions(source: str) -> dict[str, tuple[int, int]]:
    """Each identifier's first (1-based line, 0-based char column) in ``source``."""
    first: dict[str, tuple[int, int]] = {}
    for number, text in enumerate(source.split("\n"), start=1):
        for match in IDENT_RE.finditer(text):
            first.setdefault(match.group(), (number, match.start()))
    return first
