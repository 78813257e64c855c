"""Probes: names turned into rg ``Query`` objects from the language's fixed templates.

Definition, usage and wildcard probes for ranked names; import and module-member probes
for what the file imports from the repo; a probe for a key-like string literal by the
cursor; and the second hop's type probes, with ``receiver_types`` reading an untyped
receiver's type off the first pass. Weights come from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from greprag.context import ImportRef, LocalContext, untyped_receiver
from greprag.languages import (
    IDENTIFIER_RE,
    USAGE,
    Language,
    escape_identifier,
    get_language,
    is_generic,
    wildcards_for,
    words,
)
from greprag.models import Candidate, Query, QueryKind, QueryPlan, folder_entry
from greprag.rg import escape_regex
from greprag.router.names import Name, word_start_groups

if TYPE_CHECKING:
    from greprag.router.offline import RouterWeights

__all__ = [
    "base_member_probes",
    "binding_probes",
    "code_without_imports",
    "definition",
    "fragment_probes",
    "go_package_probes",
    "go_receiver_probes",
    "helper_probe",
    "import_probes",
    "module_aliases",
    "receiver_types",
    "string_key",
    "subclass_probes",
    "subject_names",
    "test_subject_probes",
    "type_probes",
    "usage",
]

IMPORT_PROBE_MAX = 30  # names in one import alternation; the latest imports are kept
FIRST_USE_MAX = 3  # imported, unused names whose uses elsewhere are probed
UNUSED_MODULES = 2  # imported modules not yet used whose top-level names are probed
MODULE_LINES_ABOVE = 3  # lines above a line start read for a module just used
_JS_LANGS = frozenset({"javascript", "typescript"})
ANY_NAME = "*"  # a module-member probe for every top-level name of the module
# import statements, each from the newline before its line: a pattern that opens on a
# literal is found by re's fast scan, one that opens on ``^\s*`` is tried at every
# character (8x slower on a long file). The blank lines above stay: they hold no name
_IMPORT_LINE = re.compile(r"\n[^\S\n]*(?:(from\s+\S+\s+)?import\b.*$|import\s.*$)", re.M)
_FROM_IMPORT_BLOCK = re.compile(r"\n[^\S\n]*from\s+\S+\s+import\s*\([^)]*\)")
_MEMBER_AT_CURSOR = re.compile(r"\.\s*\w*$")  # ``item.`` or ``item.na``
_LINE_COMMENTS = re.compile(r"#.*$|//.*$", re.M)
_TEST_NAME = re.compile(r"^test(?:_+|(?=[A-Z]))(\w+)$")  # ``test_format_pos``, ``testIsBlank``
# a parameter holding what the test expects of a name: ``expected_size``, ``expectedSize``
_EXPECTED = re.compile(r"\bexpect(?:ed)?_([^\W\d]\w*)|\bexpected([A-Z]\w*)")
_TEST_CLASS = re.compile(r"^Test_?([A-Z]\w+)$|^([A-Z]\w+?)Tests?$")  # the class under test
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
SUBJECT_PARTS = 6  # a test name's first parts that subjects are made of
SUBJECT_RUN = 3  # parts in one subject at most: ``format_progress_line``
SUBJECT_NAMES = 8  # subjects probed, the longest first
TESTED_NAMES = SUBJECT_PARTS  # a test class's name and its prefixes probed as classes
MIN_SUBJECT_CHARS = 4
MIN_LONE_SUBJECT_CHARS = 6  # a one-word subject: ``copy`` or ``write`` has overloads galore
# words that join a test name's subject to its condition (``test_parse_with_empty``):
# no subject starts or ends with one
_CONNECTORS = words("with without and or when then should after before returns raises via using")
_KEY_LITERAL = re.compile(r"([\"'])([A-Za-z_][\w.-]{3,40})\1")
_BOUND_TO = re.compile(r"^\s*(?::|=(?!=))\s*(.*)")  # what follows ``x =`` or ``x:``
_CLASS_NAME = re.compile(r"\b([A-Z][A-Za-z0-9_$]*[a-z][A-Za-z0-9_$]*)\b")
_TYPING_NAMES = words(
    "Optional Union List Dict Set Tuple Any Callable Type Sequence Mapping Iterable "
    "Iterator ClassVar Literal Final Annotated TypeVar Generic Awaitable Coroutine"
)


# -- one name, one probe -------------------------------------------------------------
def definition(name: str, kind: QueryKind, lang_name: str | None, weight: float) -> Query:
    """Where ``name`` is defined, from the language's template for ``kind``."""
    lang = get_language(lang_name)
    escaped = escape_identifier(name)
    template = lang.definition.get(kind) if lang else None
    if template is None:
        return Query(rf"\b{escaped}\b", kind, False, lang_name, name, "definition", weight)
    return Query(
        template.replace("{name}", escaped),
        kind,
        False,
        lang_name,
        name,
        "definition",
        weight,
        context_lines=4,
    )


def usage(name: Name, lang_name: str | None, weight: float) -> Query:
    """Where ``name`` is called or used as a receiver."""
    template = USAGE.get(name.kind, USAGE["variable"])
    pattern = template.replace("{name}", escape_identifier(name.name))
    return Query(pattern, name.kind, False, lang_name, name.name, "usage", weight, 2)


def fragment_probes(lang_name: str | None, names: Sequence[Name], weight: float) -> list[Query]:
    """Wildcards for names that are part of the one sought (``Name.fragment``)."""
    templates = wildcards_for(lang_name)
    out: list[Query] = []
    for name in names:
        escaped = escape_identifier(name.name)
        if name.fragment == "suffix":  # receiver `self.data_loader.` → class *DataLoader
            pattern = templates.class_suffix.replace("{name}", escaped)
            out.append(Query(pattern, "class", False, lang_name, name.name, "wildcard", weight, 4))
        elif name.fragment == "prefix":
            template = templates.class_prefix if name.kind == "class" else templates.method_prefix
            pattern = template.replace("{name}", escaped)
            out.append(
                Query(pattern, name.kind, False, lang_name, name.name, "wildcard", weight, 3)
            )
    return out


def subclass_probes(ctx: LocalContext, weight: float) -> list[Query]:
    """An empty body's class: its siblings, the other classes deriving from its bases."""
    if not (ctx.empty_body and ctx.class_bases):
        return []
    template = wildcards_for(ctx.lang).subclass
    out: list[Query] = []
    for base in ctx.class_bases[:2]:
        base_name = base.rsplit(".", 1)[-1]
        if not IDENTIFIER_RE.fullmatch(base_name) or is_generic(base_name):
            continue
        pattern = template.replace("{name}", escape_identifier(base_name))
        out.append(Query(pattern, "class", False, ctx.lang, base_name, "wildcard", weight, 4))
    return out


def base_member_probes(
    ctx: LocalContext, imported: dict[str, str], member: str, weight: float
) -> list[Query]:
    """On ``self.`` / ``this.``: the member (any member for ``""``, else those starting
    with ``member``) in the files of the class's bases that the file imports from the repo,
    where an inherited member is defined; and in the class's own file, whose members
    below the cursor the prompt does not show (the grep route keeps the nearest)."""
    files: set[str] = set()
    for base in ctx.class_bases:
        head, _, tail = base.rpartition(".")
        path = imported.get(tail) or (imported.get(head.rsplit(".", 1)[-1]) if head else None)
        if path:
            files.add(path)
    own = (ctx.path,) if ctx.path and ctx.enclosing_class else ()
    files.difference_update(own)
    if not (member == "" or IDENTIFIER_RE.fullmatch(member)):
        return []
    prefix = escape_identifier(member) if member else ""
    probe = _method_prefix_probe(ctx.lang, prefix, member, weight)
    return [replace(probe, paths=paths) for paths in (tuple(sorted(files)), own) if paths]


def _method_prefix_probe(lang: str | None, prefix: str, identifier: str, weight: float) -> Query:
    """The definitions of methods whose names start with ``prefix`` (a regex)."""
    pattern = wildcards_for(lang).method_prefix.replace("{name}", prefix)
    return Query(pattern, "method", False, lang, identifier, "wildcard", weight, 4)


def helper_probe(ctx: LocalContext, weight: float) -> Query | None:
    """At an empty body, the definitions in the cursor's own file whose names start with
    the function's (``remove`` → ``removeMapping``, ``removeEntry`` below it): the helpers
    such a body calls, which the prompt does not show when they come after it. Not in a
    test, whose name starts its siblings' names."""
    name = ctx.enclosing_function
    if not (ctx.empty_body and ctx.path and name) or is_generic(name):
        return None
    if name.lower().startswith("test"):  # its siblings are tests, not helpers
        return None
    if not IDENTIFIER_RE.fullmatch(name):
        return None
    # a longer name: the function's own overloads are the sibling probe's
    probe = _method_prefix_probe(ctx.lang, escape_identifier(name) + r"\w", name, weight)
    return replace(probe, paths=(ctx.path,))


def string_key(ctx: LocalContext, weight: float) -> Query | None:
    """A key-like string literal by the cursor (``cfg.get("timeout"``): its other uses."""
    for line in reversed(ctx.window.split("\n")[-3:]):
        keys = _KEY_LITERAL.findall(line)
        if keys:
            key = keys[-1][1]
            pattern = "[\"']" + escape_regex(key) + "[\"']"
            return Query(pattern, "other", False, ctx.lang, key, "usage", weight, 2)
    return None


def test_subject_probes(ctx: LocalContext, weight: float) -> list[Query]:
    """Inside a test (``test_progressbar_format_pos``, ``testReadSwappedLong``): the
    definitions of the functions its name names (``format_pos``, ``readSwappedLong``),
    and of the class its test class names (``TestProgressBar``, ``ProgressBarTest``):
    the code under test, which the test's lines reach through fixtures and helpers that
    say nothing of it."""
    lang = get_language(ctx.lang)
    if lang is None:
        return []
    probes: list[Query] = []
    test = _TEST_NAME.match(ctx.enclosing_function or "")
    template = lang.definition.get("method") if test else None
    if test and template:
        skip = lang.keywords
        found = expected_names(ctx.function_signature or "") + subject_names(test.group(1))
        names = [n for n in dict.fromkeys(found) if n not in skip and not is_generic(n)]
        names = names[:SUBJECT_NAMES]
        if names:
            pattern = template.replace("{name}", _alternation(names))
            identifier = ",".join(names)
            probes.append(
                Query(pattern, "method", False, ctx.lang, identifier, "definition", weight, 4)
            )
    tested = _TEST_CLASS.match(ctx.enclosing_class or "")
    if tested:
        name = tested.group(1) or tested.group(2)
        if not is_generic(name) and name not in lang.keywords:
            probes.append(_tested_definition(name, lang, weight))
    return probes


def _tested_definition(name: str, lang: Language, weight: float) -> Query:
    """The definition of what a test class names: a class (``ProgressBarTest``), the
    class its name starts with when it tests one feature of it (``ArrayUtilsInsertTest``:
    ``ArrayUtils``; two words at least), and in Python, where a test class per function
    is common, the function (``InterleaveLongestTests``: ``interleave_longest``)."""
    parts = list(_CAMEL_PART.finditer(name))
    names = [name, *(name[: part.end()] for part in reversed(parts[1:-1]))][:TESTED_NAMES]
    if lang.name == "python":
        names.append("_".join(part.group().lower() for part in parts))
    names = [n for n in dict.fromkeys(names) if not is_generic(n)]
    template = lang.definition.get("class")
    if len(names) <= 1 or template is None:
        return definition(name, "class", lang.name, weight)
    if lang.import_probe is not None:  # a class, or a function, at the module's margin
        template = lang.import_probe.replace("{names}", "{name}")
    pattern = template.replace("{name}", _alternation(names))
    return Query(pattern, "class", False, lang.name, ",".join(names), "definition", weight, 4)


def subject_names(rest: str) -> list[str]:
    """The function names a test's name holds after ``test``, the longest first: runs of
    its parts, snake_case joined with ``_`` (``progressbar_format_pos``, ``format_pos``),
    camelCase from the part before any ``_``, first letter lowered (``readSwappedLong``)."""
    snake = rest.islower() or not any(c.isalpha() for c in rest)
    segment = rest if snake else rest.split("_", 1)[0]
    parts = [p for p in segment.split("_") if p] if snake else _CAMEL_PART.findall(segment)
    parts = parts[:SUBJECT_PARTS]
    found: list[str] = []
    for i, j in _spans(len(parts)):
        if parts[i].lower() in _CONNECTORS or parts[j - 1].lower() in _CONNECTORS:
            continue
        name = "_".join(parts[i:j]) if snake else _camel(parts[i:j])
        shortest = MIN_SUBJECT_CHARS if j - i > 1 else MIN_LONE_SUBJECT_CHARS
        if len(name) >= shortest and name.isidentifier() and name not in found:
            found.append(name)
    return found


def expected_names(signature: str) -> list[str]:
    """What a parametrized test's expectations are named after: ``is_bool_flag`` of
    ``expect_is_bool_flag``, ``statusCode`` of ``expectedStatusCode``: the attribute or
    function under test, whose definition the test's lines then name."""
    found = []
    for match in _EXPECTED.finditer(signature):
        snake, camel = match.groups()
        name = snake or camel[:1].lower() + camel[1:]
        one_word = name.strip("_").isalnum() and name.islower()
        if len(name) >= (MIN_LONE_SUBJECT_CHARS if one_word else MIN_SUBJECT_CHARS):
            found.append(name)
    return found


def _spans(count: int) -> list[tuple[int, int]]:
    """The runs ``(i, j)`` of ``count`` parts up to ``SUBJECT_RUN`` long, longest first,
    leftmost first; one part alone only when it is the only one (``format`` of
    ``format_pos`` names too much)."""
    sizes = range(min(count, SUBJECT_RUN), 0 if count == 1 else 1, -1)
    return [(i, i + size) for size in sizes for i in range(count - size + 1)]


def _camel(parts: Sequence[str]) -> str:
    head = parts[0].lower() if parts[0].isupper() else parts[0][:1].lower() + parts[0][1:]
    return head + "".join(p[:1].upper() + p[1:] for p in parts[1:])


# -- imports -------------------------------------------------------------------------
def code_without_imports(blanked: str) -> str:
    """The code of a ``blank_docstrings`` text: its imports and line comments removed too
    (each import statement's line kept empty)."""
    text = "\n" + _LINE_COMMENTS.sub("", blanked)  # the first line has a newline before it
    text = _FROM_IMPORT_BLOCK.sub("\n", text)
    return _IMPORT_LINE.sub("\n", text)[1:]


def import_probes(
    ctx: LocalContext, imported: dict[str, str], code: str, weights: RouterWeights
) -> list[Query]:
    """Definitions of the in-repo names the file imports: unused ones first.

    At the first use of an imported name its only mention before the cursor is the
    import line, so the window says nothing about it. Names already used in ``code``
    (``code_without_imports``) make a second, weaker probe: they are the file's
    vocabulary for the next line. Generic names (``init``, ``run``) are probed only in
    the files they come from. Unless a member access is being typed, the latest unused
    names' uses elsewhere are probed too (``_first_use_probe``).
    """
    lang = get_language(ctx.lang)
    template = lang.import_probe if lang else None
    if template is None:
        return []
    used = set(IDENTIFIER_RE.findall(code))
    fresh: list[str] = []
    known: list[str] = []
    generic: dict[str, str] = {}
    for ref in ctx.imports:
        name = ref.name or ""
        if ref.local_name not in imported or not IDENTIFIER_RE.fullmatch(name):
            continue
        if _module_path(ctx, ref, imported):
            continue  # a module defines no name of its own: its members are probed
        if is_generic(name):
            generic[name] = imported[ref.local_name]
            continue
        bucket = known if (name in used or ref.local_name in used) else fresh
        if name not in bucket:
            bucket.append(name)
    groups: list[tuple[list[str], float, tuple[str, ...]]] = [
        (fresh, weights.import_unused, ()),
        (known, weights.import_used, ()),
    ]
    if generic:
        files = tuple(sorted(set(generic.values())))
        groups.append((list(generic), weights.import_generic, files))
    groups += _module_member_groups(ctx, imported, code, used, weights)
    probes = []
    for names, weight, files in groups:
        if not names:
            continue
        names = names[-IMPORT_PROBE_MAX:]  # the latest imports are the likeliest next
        pattern = template
        if names == [ANY_NAME]:  # the module's own names: at its left margin, not methods
            group = r"([A-Za-z_$][\w$]*)" if ctx.lang in _JS_LANGS else r"([A-Za-z_]\w*)"
            pattern = pattern.replace("^\\s*", "^")
        else:
            group = _alternation(names)
        kind = _names_kind(names)
        pattern = pattern.replace("{names}", group)
        probes.append(
            Query(pattern, kind, False, ctx.lang, ",".join(names), "import", weight, 4, files)
        )
    if fresh and weights.import_unused_usage > 0 and not _MEMBER_AT_CURSOR.search(ctx.prefix):
        probes.append(
            _first_use_probe(fresh[-FIRST_USE_MAX:], ctx.lang, weights.import_unused_usage)
        )
    return probes


# a Go package's exported top-level declarations (what ``pkg.`` can name)
_GO_EXPORTED = r"^(?:func|type|var|const)\s+([A-Z]\w*)"


def go_package_probes(ctx: LocalContext, imported: dict[str, str], weight: float) -> list[Query]:
    """``prometheus.`` at the cursor, ``prometheus`` an in-repo Go package: every name the
    package's files export, probed in its folder alone (its first file alone, where the
    import resolves, holds few of them)."""
    if ctx.lang != "go":
        return []
    typed = ctx.prefix.rstrip()
    folders = [
        folder_entry(path)
        for ref in ctx.imports
        if (path := imported.get(ref.local_name)) and typed.endswith(f"{ref.local_name}.")
    ]
    return [_go_folder_probe(_GO_EXPORTED, folder, weight) for folder in dict.fromkeys(folders)]


# the header of a Go method: its receiver's name and type (``func (c *Command) Name(``)
_GO_METHOD_HEADER = re.compile(r"^func\s+\((\w+)\s+\*?([A-Za-z_]\w*)(?:\[[^\]]*\])?\)\s*\w+")


def go_receiver_probes(ctx: LocalContext, imported: dict[str, str], weight: float) -> list[Query]:
    """``c.`` at the cursor, ``c`` of a type of the repository (the receiver of the method
    the cursor is in, ``c := &Command{...}``, ``c := cmd.NewCommand()``): every method of
    that type, probed in its package's folder (a Go type's methods live in its package,
    in any of its files); the cursor's own folder, or the folder an import resolves to."""
    if ctx.lang != "go" or not ctx.path:
        return []
    receiver = re.search(r"\b(\w+)\.$", ctx.prefix.rstrip())
    if receiver is None:
        return []
    name = receiver.group(1)
    header = _GO_METHOD_HEADER.match(ctx.function_signature or "")
    own = header is not None and header.group(1) == name  # the method's receiver
    type_name = header.group(2) if own else ctx.assignments.get(name) or ctx.annotations.get(name)
    if not type_name or not IDENTIFIER_RE.fullmatch(type_name):
        return []  # none known, or written ``pkg.Type``
    folder = folder_entry(ctx.path)
    bound = rf"\b{name}\s*:?=\s*&?(\w+)\.(?:New)?{type_name}\s*[{{(]"
    qualified = [] if own else re.findall(bound, ctx.before)
    if qualified:  # ``c := cmd.NewCommand()``: another package's type
        path = imported.get(qualified[-1])
        if path is None:
            return []  # a package from outside the repository
        folder = folder_entry(path)
    pattern = rf"^func\s+\(\w+\s+\*?{type_name}(?:\[[^\]]*\])?\)\s*([A-Za-z_]\w*)"
    return [_go_folder_probe(pattern, folder, weight)]


def _go_folder_probe(pattern: str, folder: str, weight: float) -> Query:
    """Every name ``pattern`` declares (its first group) in the Go files of ``folder``."""
    return Query(pattern, "method", False, "go", ANY_NAME, "import", weight, 4, (folder,))


def _first_use_probe(names: Sequence[str], lang_name: str | None, weight: float) -> Query:
    """Where other files call or use the names imported here but not used yet: the next
    line is likely their first use here, and those sites show how they are used."""
    pattern = rf"\b{_alternation(names)}\s*[.(]"
    kind = _names_kind(names)
    return Query(pattern, kind, False, lang_name, ",".join(names), "usage", weight, 2)


def _alternation(names: Sequence[str]) -> str:
    """``(a|b|c)``: the names as one regex group."""
    return "(" + "|".join(escape_identifier(n) for n in names) + ")"


def _names_kind(names: Sequence[str]) -> QueryKind:
    """``class`` when at least half the names are capitalised, else ``method``."""
    return "class" if sum(n[:1].isupper() for n in names) * 2 >= len(names) else "method"


def _module_member_groups(
    ctx: LocalContext, imported: dict[str, str], code: str, used: set[str], weights: RouterWeights
) -> list[tuple[list[str], float, tuple[str, ...]]]:
    """``from . import errors`` then ``errors.StrError``: the module's members in use
    (``used``: the identifiers of ``code``).

    The members this file already takes from an in-repo module are probed in that
    module's file only; with ``errors.`` at the cursor, so is every top-level name, and
    so for the latest modules imported but not yet used in code (their first use, which
    will name one of their members, is likely still to come).
    """
    if ctx.lang != "python" and ctx.lang not in _JS_LANGS:
        return []
    groups: list[tuple[list[str], float, tuple[str, ...]]] = []
    unused: list[str] = []
    for ref in ctx.imports:
        path = _module_path(ctx, ref, imported)
        if path is None:
            continue
        members = list(dict.fromkeys(_members_used(ref.local_name, code, ctx.lang)))
        if ctx.prefix.rstrip().endswith(f"{ref.local_name}."):
            groups.append(([ANY_NAME], weights.module_at_cursor, (path,)))
        elif members:
            groups.append((members[-IMPORT_PROBE_MAX:], weights.module_members, (path,)))
            if ref.local_name in _members_used_above(ctx):
                groups.append(([ANY_NAME], weights.module_just_used, (path,)))
        elif ref.local_name not in used and path not in unused:
            unused.append(path)
    groups += [([ANY_NAME], weights.module_unused, (path,)) for path in unused[-UNUSED_MODULES:]]
    return groups


def _members_used_above(ctx: LocalContext) -> set[str]:
    """The receivers of the member accesses (``_sigs.x``) in the last lines above a
    cursor at a statement's start: the next line likely uses another member of the same.
    None at an empty body, whose signature names types rather than what it will call."""
    if ctx.prefix.strip() or ctx.empty_body:
        return set()
    above = [line for line in ctx.before.splitlines()[-MODULE_LINES_ABOVE:] if line.strip()]
    return set(re.findall(r"\b([A-Za-z_]\w*)\.[A-Za-z_]", "\n".join(above)))


def _module_path(ctx: LocalContext, ref: ImportRef, imported: dict[str, str]) -> str | None:
    """The file of the Python module ``ref`` imports (``from . import errors``, ``import
    pkg.errors as errors``) or of the JavaScript/TypeScript module it imports whole
    (``import * as errors``), or None when it imports a name from a module."""
    path = imported.get(ref.local_name)
    if ctx.lang in _JS_LANGS and path:
        return path if ref.name is None else None
    if ctx.lang != "python" or not path:
        return None
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    # ``import pkg.mod as m``; a package's ``__init__`` mostly re-exports its names
    aliased_module = ref.name is None and ref.alias is not None and stem != "__init__"
    if aliased_module or ref.local_name in (stem, "__init__") or ref.name == stem:
        return path
    return None


def module_aliases(ctx: LocalContext, imported: dict[str, str]) -> set[str]:
    """The names under which the file imports in-repo Python modules (``errors`` of
    ``from . import errors``), any Go package or a JavaScript/TypeScript module as a
    whole (``import * as core``): no definition bears them."""
    if ctx.lang == "go":
        return {ref.local_name for ref in ctx.imports}
    if ctx.lang in _JS_LANGS:
        return {ref.local_name for ref in ctx.imports if ref.name is None}
    return {ref.local_name for ref in ctx.imports if _module_path(ctx, ref, imported)}


def _members_used(alias: str, code: str, lang: str | None = "python") -> list[str]:
    """What ``re.findall(rf"\\b{alias}\\.([A-Za-z_]\\w*)", code)`` finds, searched from the
    literal ``alias.``; in JavaScript/TypeScript names may hold ``$``, and a module path's
    ``util.js`` (after ``/``) is no use of ``util``."""
    if lang in _JS_LANGS:
        pattern = rf"(?<![\w$./]){re.escape(alias)}\.([A-Za-z_$][\w$]*)"
        return re.findall(pattern, code)
    return word_start_groups(re.compile(rf"{re.escape(alias)}\.([A-Za-z_]\w*)"), code)


# -- the second hop ------------------------------------------------------------------
def binding_probes(plan: QueryPlan, receiver: str | None) -> set[int]:
    """The plan's definition probes of ``receiver``: they find its bindings elsewhere
    (``self.x = Loader(...)``, ``x: Loader``)."""
    return {
        i
        for i, q in enumerate(plan.queries)
        if q.identifier == receiver and q.purpose == "definition"
    }


def receiver_types(
    ctx: LocalContext,
    plan: QueryPlan,
    candidates: Sequence[Candidate],
    lines_of: Callable[[str], Sequence[str]],
    externals: set[str],
) -> list[str]:
    """``x.`` at the cursor with x's type unnamed: the classes x is bound to elsewhere.

    Reads the lines where the plan's definition probes for x matched (``self.x =
    Loader(...)``, ``x: Loader``) and returns the class names after ``=`` or ``:``, in
    order, without external, typing or generic names.
    """

    receiver = untyped_receiver(ctx)
    if receiver is None:
        return []
    probes = binding_probes(plan, receiver)
    types: list[str] = []
    for cand in candidates:
        if probes.isdisjoint(cand.queries):
            continue
        for line in cand.match_lines:
            text = lines_of(cand.path)[line - 1]
            bound = _BOUND_TO.search(text.split(receiver, 1)[-1])
            for name in _CLASS_NAME.findall(bound.group(1) if bound else ""):
                if name in types or name in externals or name in _TYPING_NAMES:
                    continue
                if not is_generic(name):
                    types.append(name)
    return types


def type_probes(lang_name: str | None, types: Sequence[str], weight: float) -> list[Query]:
    """Definition probes for class names found by a second look (``receiver_types``)."""
    return [
        replace(definition(name, "class", lang_name, weight), purpose="second hop")
        for name in types
        if IDENTIFIER_RE.fullmatch(name)
    ]
