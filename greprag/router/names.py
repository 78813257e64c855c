"""Names worth searching: identifiers harvested around the cursor, scored and ranked.

Two sources feed the offline plan. The cursor's own targets (``_cursor_targets``): the
receiver type of ``x.``, the open call, the declared type, the half-typed word, and for
an empty body its siblings and bases. The window (``harvest``): every identifier before
the cursor, weighted by how close it sits, less when generic, external, a bare local or
defined in this file, more when imported from the repo.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from greprag.context import ImportRef, LocalContext
from greprag.languages import (
    IDENTIFIER_RE,
    STRING_LITERAL_RE,
    get_language,
    is_constant,
    is_generic,
)
from greprag.models import QueryKind

if TYPE_CHECKING:
    from greprag.router.offline import RouterWeights

__all__ = [
    "Fragment",
    "Name",
    "blank_docstrings",
    "external_names",
    "harvest",
    "open_call",
    "rank",
    "receiver_call",
    "self_member",
    "targets",
    "word_start_groups",
]

Fragment = Literal["suffix", "prefix"]
PY_BUILTINS = frozenset(dir(builtins))
_TOKEN_RE = re.compile(r"(\.\s*)?((?:[^\W\d]|\$)[\w$]*)(\s*\()?")
_COMMENT_RE = {"#": re.compile(r"#.*$"), "//": re.compile(r"//.*$")}
_RECEIVER_RE = re.compile(r"((?:[A-Za-z_$][\w$]*\s*\.\s*)+)([A-Za-z_$][\w$]*)?$")
_BINDING_RE = re.compile(r"(?:^|[\s(,])(?:self\.|this\.)?([A-Za-z_][\w]*)\s*(?::|=|:=)\s*$")
_PARTIAL_RE = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)$")
_CALLEE_RE = re.compile(r"([A-Za-z_$][\w$]*)\s*$")
# ``x.getQueue().`` / ``getQueue(a, f(b)).re``: a call's result is the receiver
_CALL_RECEIVER_RE = re.compile(
    r"([A-Za-z_$][\w$]*)\s*\((?:[^()]|\([^()]*\))*\)\s*\.\s*([A-Za-z_$][\w$]*)?$"
)
# ``getViewQueue()`` returns a ``ViewQueue``; a one-word one (``getDefault``) says little
_GETTER_RE = re.compile(r"get([A-Z][a-z\d$_]*[A-Z][\w$]*)")
_SELF_DOT = r"\b(?:self|cls|this|super\(\s*\))\s*\.\s*"  # the object or class itself, then a dot
_SELF_RECEIVER_RE = re.compile(_SELF_DOT + "$")
_SELF_ACCESS_RE = re.compile(_SELF_DOT + r"([A-Za-z_$][\w$]*)?$")
_DECL_TYPE_RE = re.compile(r"^\s*(?:final\s+)?([A-Z][\w$]*)(?:<[^=]*>)?\s+[a-z_$][\w$]*\s*=\s*$")
# What ``blank_docstrings`` empties (group 1): Python's triple-quoted strings, a braced
# language's block comments. String literals and line comments are matched only to be
# passed over: ``"*/*"`` opens no comment, ``# use """`` no docstring.
_PY_DOCS = r'"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)'
_BLOCK_COMMENTS = r"/\*[\s\S]*?(?:\*/|$)"
_ONE_LINE_STRINGS = r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
_DOC_BLOCKS = {
    "python": re.compile(rf"({_PY_DOCS})|{_ONE_LINE_STRINGS}|#[^\n]*"),
    None: re.compile(rf"({_PY_DOCS}|{_BLOCK_COMMENTS})|{_ONE_LINE_STRINGS}"),
}
_BRACED_DOC_BLOCKS = re.compile(rf"({_BLOCK_COMMENTS})|{_ONE_LINE_STRINGS}|//[^\n]*")
_SELF_NAMES = ("self", "this", "cls", "super")
_TYPE_DEFINITION = re.compile(r"(?:class|interface|enum|record|struct|trait)\s+(\w+)")
_WORD_CHAR = re.compile(r"\w")
# How far back of a name the receiver chain (``a.b.c.``) and ``new`` are looked for: a
# bounded look keeps harvesting linear in the line's length.
RECEIVER_CHARS = 120


@dataclass
class Name:
    """An identifier worth searching, with what we know about it.

    ``fragment`` marks a name that is only part of the one sought: the end of a class
    name (``self.data_loader.`` → ``*DataLoader``) or the start of a half-typed word.
    """

    name: str
    kind: QueryKind
    score: float = 0.0
    called: bool = False
    fragment: Fragment | None = None
    reasons: list[str] = field(default_factory=list)
    defined_here: bool = False  # the current file defines it: never a definition probe


@lru_cache(maxsize=4)
def blank_docstrings(text: str, lang: str | None = None) -> str:
    """``text`` with its docstrings (Python) or block comments (braced languages) emptied,
    lines kept; both when the language is unknown. Remembered: the router and the similar
    route both blank the text before the cursor."""
    pattern = _DOC_BLOCKS.get(lang, _BRACED_DOC_BLOCKS)
    return pattern.sub(_blanked, text)


def _blanked(match: re.Match[str]) -> str:
    block = match.group(1)
    return match.group(0) if block is None else "\n" * block.count("\n")


def external_names(ctx: LocalContext, in_repo: set[str]) -> set[str]:
    """Local names bound to imports from outside the repo (stdlib, dependencies)."""
    return {ref.local_name for ref in ctx.imports if ref.local_name not in in_repo}


def rank(ctx: LocalContext, in_repo: set[str], blanked: str, weights: RouterWeights) -> list[Name]:
    """Every name worth a probe, best first: the cursor's targets plus the window's names.

    ``blanked`` is ``blank_docstrings(ctx.before, ctx.lang)``.
    """
    harvested = harvest(ctx, in_repo, blanked, weights)
    ranked: dict[str, Name] = {}
    for cand in targets(ctx, in_repo, weights):
        existing = ranked.get(cand.name)
        if existing is None or cand.score > existing.score:
            ranked[cand.name] = cand
    for name, cand in harvested.items():
        if name in ranked:
            ranked[name].score += cand.score
        else:
            ranked[name] = cand
    ordered = sorted(ranked.values(), key=lambda c: -c.score)
    return [c for c in ordered if len(c.name) > 1]


def by_original_name(
    names: list[Name], imports: Sequence[ImportRef], modules: set[str]
) -> list[Name]:
    """``names`` with each one the file imports under another name (``use
    crate::error::Error as ClapError``, ``import { isMap as check }``) as its definition
    and other files bear it, merged with that name where both are ranked; a module's
    alias (``modules``) stays, since no definition bears either."""
    originals = {
        ref.alias: ref.name
        for ref in imports
        if ref.alias and ref.name and ref.alias != ref.name and ref.alias not in modules
        if IDENTIFIER_RE.fullmatch(ref.name)
    }
    if not any(n.name in originals for n in names):
        return names
    merged: dict[str, Name] = {}
    for cand in names:
        if not cand.fragment and cand.name in originals:
            cand = replace(cand, name=originals[cand.name])
        held = merged.get(cand.name)
        if held is None:
            merged[cand.name] = cand
        else:
            held.score += cand.score
    return sorted(merged.values(), key=lambda c: -c.score)


# -- the window ----------------------------------------------------------------------
def harvest(
    ctx: LocalContext, in_repo: set[str], blanked: str, weights: RouterWeights
) -> dict[str, Name]:
    """The identifiers of the window, scored by proximity to the cursor and provenance."""
    w = weights
    lang = get_language(ctx.lang)
    keywords = lang.keywords if lang else frozenset()
    comment = _COMMENT_RE.get(lang.line_comment if lang else "#")
    local_defs = _local_definitions(ctx)
    externals = external_names(ctx, in_repo)
    lines = blanked.split("\n")[-len(ctx.window.split("\n")) :]
    lines[-1] = _PARTIAL_RE.sub("", lines[-1])  # a half-typed word is not a name yet
    found: dict[str, Name] = {}
    for offset, raw in enumerate(reversed(lines)):
        text = STRING_LITERAL_RE.sub('""', raw)
        if comment is not None:
            text = comment.sub("", text)
        if re.match(r"\s*(from|import|package|using|use)\b", text):
            continue
        proximity = 1.0 / (1.0 + w.proximity_decay * offset)
        for m in _TOKEN_RE.finditer(text):
            dotted, name, paren = m.group(1), m.group(2), m.group(3)
            if name in keywords or name in _SELF_NAMES:
                continue
            if ctx.lang in (None, "python") and name in PY_BUILTINS:
                continue
            before = text[max(0, m.start() - RECEIVER_CHARS) : m.start()]
            receiver = before.rstrip()
            root = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\.\s*[A-Za-z_$][\w$]*\s*)*$", receiver)
            if dotted and root and root.group(1) in externals:
                continue  # os.path.join: members of external modules
            if name in externals:
                continue
            if dotted:
                _add_receiver_type(ctx, receiver, proximity, found, w)
            after_new = bool(re.search(r"\bnew\s*$", before))
            kind = _kind_of(name, bool(paren), after_new, ctx.lang)
            score = proximity
            reasons = []
            local = name in local_defs and name not in in_repo  # an import is not masked
            if local:
                score *= w.defined_here
                reasons.append("defined in this file")
            if name in in_repo:
                score *= w.imported_from_repo
                reasons.append("imported from the repo")
            if is_generic(name):
                score *= w.generic
                reasons.append("generic")
            if kind == "variable" and not dotted and name not in in_repo:
                score *= w.bare_variable  # a bare lowercase name is most likely a local
            cand = found.get(name)
            if cand is None:
                found[name] = Name(
                    name, kind, score, bool(paren), reasons=reasons, defined_here=local
                )
            else:
                cand.score = max(cand.score, score) + w.repeat_bonus * score
                cand.called = cand.called or bool(paren)
                if paren and cand.kind == "variable":
                    cand.kind = "method"
    return found


def _local_definitions(ctx: LocalContext) -> set[str]:
    """Names the current file defines itself (its own defs, classes, local variables)."""
    if ctx.lang == "python" or ctx.lang is None:
        return set(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", ctx.before, re.M))
    return set(word_start_groups(_TYPE_DEFINITION, ctx.before))


def word_start_groups(pattern: re.Pattern[str], text: str) -> list[str]:
    """What ``re.findall`` finds (one group) with ``\b`` before ``pattern``, the ``\b``
    checked by hand: a pattern opening on ``\b`` is tried at every character (~30x slower
    on a long file), one opening on a literal is found by ``re``'s fast scan."""
    found: list[str] = []
    at = 0
    while match := pattern.search(text, at):
        if match.start() and _WORD_CHAR.match(text, match.start() - 1):
            at = match.start() + 1  # inside a longer word (``subclass``)
            continue
        found.append(match.group(1))
        at = match.end()
    return found


def _add_receiver_type(
    ctx: LocalContext,
    receiver: str,
    proximity: float,
    found: dict[str, Name],
    weights: RouterWeights,
) -> None:
    """``self.loader.x`` with ``self.loader = DataLoader(...)`` in view: DataLoader counts."""
    last = re.search(r"([A-Za-z_$][\w$]*)\s*$", receiver)
    if not last:
        return
    type_name = ctx.assignments.get(last.group(1)) or ctx.annotations.get(last.group(1))
    if not type_name:
        return
    kind = _type_kind(ctx, last.group(1), type_name)
    type_name = _bare_type(type_name)
    if not IDENTIFIER_RE.fullmatch(type_name) or type_name in PY_BUILTINS:
        return
    score = weights.window_receiver_type * proximity
    cand = found.get(type_name)
    if cand is None:
        found[type_name] = Name(type_name, kind, score, reasons=["receiver type"])
    else:
        cand.score = max(cand.score, score) + weights.repeat_bonus * score


def _type_kind(ctx: LocalContext, receiver: str, type_name: str) -> QueryKind:
    """What to probe for a receiver's type as the window names it: a class, or in Python
    the function it was assigned from (``es = parse_etags(...)``: lower case), whose
    return annotation the grep route reads (``routes.returns``)."""
    factory = ctx.assignments.get(receiver) == type_name and _bare_type(type_name)[:1].islower()
    return "method" if ctx.lang == "python" and factory else "class"


def _bare_type(annotation: str) -> str:
    """``pkg.Loader[int]`` → ``Loader``."""
    return re.split(r"[\[<]", annotation)[0].rsplit(".", 1)[-1]


def _snake_to_camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _kind_of(name: str, called: bool, after_new: bool, lang: str | None) -> QueryKind:
    if after_new:
        return "class"
    if is_constant(name):
        return "variable"
    if name[0].isupper():
        if called and lang in ("go", "csharp"):
            return "method"
        return "class"
    return "method" if called else "variable"


# -- the cursor's own targets --------------------------------------------------------
def targets(ctx: LocalContext, in_repo: set[str], weights: RouterWeights) -> list[Name]:
    """What the cursor is about to use, then the enclosing class's bases (and, in an
    empty body, the method's siblings)."""
    found = _cursor_targets(ctx, weights)
    if ctx.empty_body:
        return found + _empty_body_targets(ctx, in_repo, weights)
    # on ``self.`` the member sought is the class's own or inherited: its bases are targets
    on_self = self_member(ctx) is not None
    return found + _base_targets(ctx, weights.receiver_type if on_self else weights.base, in_repo)


def open_call(prefix: str) -> tuple[str, str] | None:
    """The innermost call the cursor is inside of, ``(callee, text before it)``:
    ``x = arrange(rows, key=len(r), `` → ``("arrange", "x = ")``."""
    depth = 0
    for index in range(len(prefix) - 1, -1, -1):
        char = prefix[index]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                if char != "(":
                    return None
                callee = _CALLEE_RE.search(prefix[:index])
                return (callee.group(1), prefix[: callee.start()]) if callee else None
            depth -= 1
    return None


def self_member(ctx: LocalContext) -> str | None:
    """The member of the object (or, in a classmethod, the class) itself the cursor is
    on: ``self.lo`` → ``lo``, ``this.`` / ``cls.`` → ``""``, ``self.load(a, `` → ``load``;
    None elsewhere."""
    prefix = STRING_LITERAL_RE.sub('""', ctx.prefix)
    access = _SELF_ACCESS_RE.search(prefix)
    if access:
        return access.group(1) or ""
    call = open_call(prefix)
    if call and _SELF_RECEIVER_RE.search(call[1]):
        return call[0]
    return None


def _cursor_targets(ctx: LocalContext, weights: RouterWeights) -> list[Name]:
    """What the cursor line is about to use: receiver type, open call, declared type."""
    w = weights
    prefix = _cursor_code(ctx)
    found: list[Name] = []
    receiver = _RECEIVER_RE.search(prefix)
    returned = _call_receiver(prefix)
    partial = None
    if receiver and receiver.group(1).rstrip().endswith("."):
        chain = [p.strip() for p in receiver.group(1).split(".") if p.strip()]
        partial = receiver.group(2)
        last = chain[-1]
        type_name = (
            ctx.assignments.get(last)
            or ctx.annotations.get(last)
            or (last if last[:1].isupper() else None)
        )
        if type_name:
            kind = _type_kind(ctx, last, type_name)
            found.append(
                Name(_bare_type(type_name), kind, w.receiver_type, reasons=["receiver type"])
            )
        else:
            guess = _snake_to_camel(last)
            if last not in ("self", "this") and len(guess) > 2:
                found.append(
                    Name(guess, "class", w.receiver_guess, fragment="suffix", reasons=["guess"])
                )
        if last not in ("self", "this", "cls"):
            found.append(Name(last, "variable", w.receiver, reasons=["receiver"]))
    elif returned:  # a call's result is the receiver: the callee (and a getter's type)
        callee, partial = returned.group(1), returned.group(2)
        getter = _GETTER_RE.fullmatch(callee)
        if getter:
            found.append(Name(getter.group(1), "class", w.receiver_type, reasons=["getter type"]))
        if getter or not is_generic(callee):
            reason = "getter" if getter else "receiver call"
            found.append(Name(callee, "method", w.receiver, called=True, reasons=[reason]))
    else:
        word = _PARTIAL_RE.search(prefix)
        lang = get_language(ctx.lang)
        if word and len(word.group(1)) >= 2 and not (lang and word.group(1) in lang.keywords):
            kind = "class" if word.group(1)[0].isupper() else "method"
            found.append(
                Name(
                    word.group(1), kind, w.typed_prefix, fragment="prefix", reasons=["typed prefix"]
                )
            )
    if partial:  # ``x.lo`` / ``x.get().lo``: a member starting with ``lo``
        found.append(
            Name(partial, "method", w.member_prefix, fragment="prefix", reasons=["member prefix"])
        )
    call = open_call(prefix)
    if call and call[0] not in ("if", "for", "while", "switch", "print", "return"):
        found.append(Name(call[0], "method", w.open_call, called=True, reasons=["open call"]))
    declared = _DECL_TYPE_RE.match(prefix)
    if declared:
        found.append(Name(declared.group(1), "class", w.declared_type, reasons=["declared type"]))
    bound = _BINDING_RE.search(prefix)
    if bound and not declared:
        # ``self._cookies = `` / ``content: ``: the value is often a ``*Cookies`` / ``*Content``
        stem = _snake_to_camel(bound.group(1).lstrip("_"))
        if len(stem) > 3 and not is_generic(bound.group(1)):
            found.append(
                Name(stem, "class", w.bound_name, fragment="suffix", reasons=["bound name"])
            )
    return found


def receiver_call(ctx: LocalContext) -> str | None:
    """The method whose result the cursor's member access is on: ``setQuoteMode`` after
    ``builder().setQuoteMode(ALL).``, the chain read over the lines above when it goes on
    from them; None on any other receiver."""
    call = _call_receiver(_cursor_code(ctx))
    return call.group(1) if call else None


def _cursor_code(ctx: LocalContext) -> str:
    """The text before the cursor (``_chained_prefix``), its string literals emptied."""
    return STRING_LITERAL_RE.sub('""', _chained_prefix(ctx))


def _call_receiver(prefix: str) -> re.Match[str] | None:
    """``callee(...).`` (and a member's first letters) ending ``prefix``: the callee is
    group 1, the letters group 2; None when a plain receiver (``a.b.``) ends it."""
    return None if _RECEIVER_RE.search(prefix) else _CALL_RECEIVER_RE.search(prefix)


def _chained_prefix(ctx: LocalContext, max_lines: int = 4) -> str:
    """The cursor line's text before the cursor, joined to the lines above when it goes
    on a chain of calls from there (a line starting with ``.``)."""
    prefix = ctx.prefix
    if not prefix.lstrip().startswith("."):
        return prefix
    joined = prefix.strip()
    for line in reversed(ctx.before.rsplit("\n", max_lines + 1)[:-1][-max_lines:]):
        joined = line.strip() + joined
        if not line.lstrip().startswith("."):
            break
    return joined


_ANNOTATION_RE = re.compile(r"@[\w$.]+")
_TYPE_NAME_RE = re.compile(r"\b[A-Z][\w$]*")


def parameter_types(ctx: LocalContext) -> set[str]:
    """The class names in the parameter list of the function whose body the cursor is
    in (annotations aside): the last parenthesised group of its signature."""
    source = ctx.function_signature or ""
    close = source.rfind(")")
    depth = 0
    for index in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(source[index], 0)
        if depth == 0:
            params = _ANNOTATION_RE.sub(" ", source[index + 1 : close])
            return set(_TYPE_NAME_RE.findall(params))
    return set()


def _empty_body_targets(ctx: LocalContext, in_repo: set[str], weights: RouterWeights) -> list[Name]:
    """An empty body: siblings with the same method name, the bases, the signature."""
    found: list[Name] = []
    if ctx.enclosing_function and not is_generic(ctx.enclosing_function):
        found.append(Name(ctx.enclosing_function, "method", weights.sibling, reasons=["sibling"]))
    return found + _base_targets(ctx, weights.empty_body_base, in_repo)


def _base_targets(ctx: LocalContext, score: float, in_repo: set[str]) -> list[Name]:
    """The enclosing class's bases and interfaces: the members it must honour."""
    found = []
    externals = external_names(ctx, in_repo)
    for base in ctx.class_bases[:3]:
        name = base.rsplit(".", 1)[-1]
        if name in externals or base.split(".", 1)[0] in externals:
            continue
        if IDENTIFIER_RE.fullmatch(name) and name not in ("object", "ABC", "Object"):
            found.append(Name(name, "class", score, reasons=["base class"]))
    return found
