"""The offline router: deterministic keyword prediction into fixed rg templates.

Like the paper's distilled router, it only decides *which identifiers* to search for and
of what kind; the rg command comes from a fixed template per language and kind. It
ranks identifiers by how close they sit to the cursor (the receiver or callee at the
cursor first), prefers rare, in-repo names over generic or external ones, and mixes
definition probes with usage probes and a few wildcard ones (≤ 10 queries).
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field, replace

from greprag.context import LocalContext
from greprag.languages import IDENTIFIER_RE, escape_identifier, get_language, is_generic
from greprag.models import Query, QueryPlan
from greprag.rg import escape_regex as escape_regex_literal

MAX_QUERIES = 10
_TOKEN_RE = re.compile(r"(\.\s*)?([A-Za-z_$][\w$]*)(\s*\()?")
_STRING_RE = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_COMMENT_RE = {"#": re.compile(r"#.*$"), "//": re.compile(r"//.*$")}
_PY_BUILTINS = frozenset(dir(builtins))
_RECEIVER_RE = re.compile(r"((?:[A-Za-z_$][\w$]*\s*\.\s*)+)([A-Za-z_$][\w$]*)?$")
_KEY_LITERAL = re.compile(r"([\"'])([A-Za-z_][\w.-]{3,40})\1")
_BINDING_RE = re.compile(r"(?:^|[\s(,])(?:self\.|this\.)?([A-Za-z_][\w]*)\s*(?::|=|:=)\s*$")
_PARTIAL_RE = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)$")
_CALL_OPEN_RE = re.compile(r"([A-Za-z_$][\w$]*)\s*\([^()]*$")
_DECL_TYPE_RE = re.compile(r"^\s*(?:final\s+)?([A-Z][\w$]*)(?:<[^=]*>)?\s+[a-z_$][\w$]*\s*=\s*$")


IMPORT_PROBE_MAX = 30
ANY_NAME = "*"  # a module-member probe for every top-level name of the module
_IMPORT_LINE = re.compile(r"^\s*(from\s+\S+\s+)?import\b.*$|^\s*import\s.*$", re.M)
_IMPORT_TEMPLATES = {
    "python": r"^\s*(class|(async\s+)?def)\s+{names}\b|^{names}\s*(:[^=\n]+)?=[^=]",
    "java": r"\b(class|interface|enum|record|@interface)\s+{names}\b",
    "csharp": r"\b(class|interface|enum|struct|record)\s+{names}\b",
    "typescript": (r"\b(class|interface|type|enum|function\*?|const|let|var)\s+{names}\b"),
    "javascript": r"\b(class|function\*?|const|let|var)\s+{names}\b",
}


_BLOCK_STRINGS = re.compile(r'"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)|/\*[\s\S]*?(?:\*/|$)')
_LINE_COMMENTS = re.compile(r"#.*$|//.*$", re.M)


def _blank_docstrings(text: str) -> str:
    """``text`` with triple-quoted strings and block comments emptied, lines kept."""
    return _BLOCK_STRINGS.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _code_without_imports(blanked: str) -> str:
    """The code of a ``_blank_docstrings`` text: its imports and line comments removed too."""
    text = _LINE_COMMENTS.sub("", blanked)
    text = re.sub(r"^\s*from\s+\S+\s+import\s*\([^)]*\)", "", text, flags=re.M)
    return _IMPORT_LINE.sub("", text)


def external_names(ctx: LocalContext, in_repo: set[str]) -> set[str]:
    """Local names bound to imports from outside the repo (stdlib, dependencies)."""
    return {ref.local_name for ref in ctx.imports if ref.local_name not in in_repo}


@dataclass
class Candidate:
    """An identifier worth searching, with what we know about it."""

    name: str
    kind: str
    score: float = 0.0
    called: bool = False
    member_of: str | None = None
    reasons: list[str] = field(default_factory=list)


def _snake_to_camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _kind_of(name: str, called: bool, after_new: bool, lang: str | None) -> str:
    if after_new:
        return "class"
    if name.isupper() and len(name) > 1:
        return "variable"
    if name[0].isupper():
        if called and lang in ("go", "csharp"):
            return "method"
        return "class"
    return "method" if called else "variable"


class OfflineRouter:
    """Plan ≤ ``max_queries`` rg queries from a LocalContext, no model needed."""

    name = "offline"

    def __init__(self, max_queries: int = MAX_QUERIES, window_lines: int = 30) -> None:
        self.max_queries = max_queries
        self.window_lines = window_lines

    # -- identifier harvesting -------------------------------------------------------
    def _local_definitions(self, ctx: LocalContext) -> set[str]:
        """Names the current file defines itself (its own defs, classes, local variables)."""
        defined: set[str] = set()
        if ctx.lang == "python" or ctx.lang is None:
            defined |= set(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", ctx.before, re.M))
        else:
            defined |= set(
                re.findall(r"\b(?:class|interface|enum|record|struct|trait)\s+(\w+)", ctx.before)
            )
        return defined

    def _harvest(self, ctx: LocalContext, in_repo: set[str], blanked: str) -> dict[str, Candidate]:
        lang = get_language(ctx.lang)
        keywords = lang.keywords if lang else frozenset()
        comment = _COMMENT_RE.get(lang.line_comment if lang else "#")
        local_defs = self._local_definitions(ctx)
        externals = external_names(ctx, in_repo)
        lines = blanked.split("\n")[-len(ctx.window.split("\n")) :]
        lines[-1] = _PARTIAL_RE.sub("", lines[-1])  # a half-typed word is not a name yet
        found: dict[str, Candidate] = {}
        for offset, raw in enumerate(reversed(lines)):
            text = _STRING_RE.sub('""', raw)
            if comment is not None:
                text = comment.sub("", text)
            if re.match(r"\s*(from|import|package|using|use)\b", text):
                continue
            proximity = 1.0 / (1.0 + 0.35 * offset)
            for m in _TOKEN_RE.finditer(text):
                dotted, name, paren = m.group(1), m.group(2), m.group(3)
                if name in keywords or name in ("self", "this", "cls", "super"):
                    continue
                if ctx.lang in (None, "python") and name in _PY_BUILTINS:
                    continue
                receiver = text[: m.start()].rstrip()
                root = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\.\s*[A-Za-z_$][\w$]*\s*)*$", receiver)
                if dotted and root and root.group(1) in externals:
                    continue  # os.path.join: members of external modules
                if name in externals:
                    continue
                if dotted:
                    self._add_receiver_type(ctx, receiver, proximity, found)
                after_new = bool(re.search(r"\bnew\s*$", text[: m.start()]))
                kind = _kind_of(name, bool(paren), after_new, ctx.lang)
                score = proximity
                reasons = []
                if name in local_defs:
                    score *= 0.25
                    reasons.append("defined in this file")
                if name in in_repo:
                    score *= 1.5
                    reasons.append("imported from the repo")
                if is_generic(name):
                    score *= 0.2
                    reasons.append("generic")
                if kind == "variable" and not dotted and name not in in_repo:
                    score *= 0.35  # a bare lowercase name is most likely a local
                cand = found.get(name)
                if cand is None:
                    found[name] = Candidate(name, kind, score, bool(paren), None, reasons)
                else:
                    cand.score = max(cand.score, score) + 0.05 * score
                    cand.called = cand.called or bool(paren)
                    if paren and cand.kind == "variable":
                        cand.kind = "method"
        return found

    @staticmethod
    def _add_receiver_type(
        ctx: LocalContext, receiver: str, proximity: float, found: dict[str, Candidate]
    ) -> None:
        """``self.loader.x`` with ``self.loader = DataLoader(...)`` in view: DataLoader counts."""
        last = re.search(r"([A-Za-z_$][\w$]*)\s*$", receiver)
        if not last:
            return
        type_name = ctx.assignments.get(last.group(1)) or ctx.annotations.get(last.group(1))
        if not type_name:
            return
        type_name = re.split(r"[\[<]", type_name)[0].rsplit(".", 1)[-1]
        if not IDENTIFIER_RE.fullmatch(type_name) or type_name in _PY_BUILTINS:
            return
        score = 0.9 * proximity
        cand = found.get(type_name)
        if cand is None:
            found[type_name] = Candidate(type_name, "class", score, reasons=["receiver type"])
        else:
            cand.score = max(cand.score, score) + 0.05 * score

    # -- the cursor's own target -----------------------------------------------------
    def _cursor_targets(self, ctx: LocalContext) -> list[Candidate]:
        """What the cursor line is about to use: receiver type, open call, declared type."""
        prefix = _STRING_RE.sub('""', ctx.prefix)
        targets: list[Candidate] = []
        receiver = _RECEIVER_RE.search(prefix)
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
                type_name = re.split(r"[\[<]", type_name)[0].rsplit(".", 1)[-1]
                targets.append(Candidate(type_name, "class", 3.0, reasons=["receiver type"]))
            else:
                guess = _snake_to_camel(last)
                if last not in ("self", "this") and len(guess) > 2:
                    targets.append(
                        Candidate(guess, "class", 1.2, member_of="wildcard", reasons=["guess"])
                    )
            if last not in ("self", "this", "cls"):
                targets.append(
                    Candidate(last, "variable", 2.0, member_of="usage", reasons=["receiver"])
                )
            if partial:
                targets.append(
                    Candidate(partial, "method", 2.5, member_of="prefix", reasons=["member prefix"])
                )
        else:
            word = _PARTIAL_RE.search(prefix)
            lang = get_language(ctx.lang)
            if word and len(word.group(1)) >= 2 and not (lang and word.group(1) in lang.keywords):
                kind = "class" if word.group(1)[0].isupper() else "method"
                targets.append(
                    Candidate(
                        word.group(1), kind, 2.4, member_of="prefix", reasons=["typed prefix"]
                    )
                )
        call = _CALL_OPEN_RE.search(prefix)
        if call and call.group(1) not in ("if", "for", "while", "switch", "print", "return"):
            targets.append(
                Candidate(call.group(1), "method", 2.8, called=True, reasons=["open call"])
            )
        declared = _DECL_TYPE_RE.match(prefix)
        if declared:
            targets.append(Candidate(declared.group(1), "class", 3.0, reasons=["declared type"]))
        bound = _BINDING_RE.search(prefix)
        if bound and not declared:
            # ``self._cookies = `` / ``content: ``: the value is often a ``*Cookies`` / ``*Content``
            stem = _snake_to_camel(bound.group(1).lstrip("_"))
            if len(stem) > 3 and not is_generic(bound.group(1)):
                targets.append(
                    Candidate(stem, "class", 1.1, member_of="wildcard", reasons=["bound name"])
                )
        return targets

    # -- query templates -------------------------------------------------------------
    def _definition(self, cand: Candidate, lang_name: str | None, weight: float) -> Query | None:
        lang = get_language(lang_name)
        name = escape_identifier(cand.name)
        template = lang.definition.get(cand.kind) if lang else None
        if template is None:
            return Query(
                rf"\b{name}\b", cand.kind, False, lang_name, cand.name, "definition", weight
            )
        return Query(
            template.replace("{name}", name),
            cand.kind,
            False,
            lang_name,
            cand.name,
            "definition",
            weight,
            context_lines=4,
        )

    def _usage(self, cand: Candidate, lang_name: str | None, weight: float) -> Query:
        name = escape_identifier(cand.name)
        if cand.kind == "method":
            pattern = rf"\.{name}\s*\(|\b{name}\s*\("
        elif cand.kind == "class":
            pattern = rf"\b{name}\s*[.(]|new\s+{name}\b|:\s*{name}\b"
        else:
            pattern = rf"\.{name}\.\w+|\b{name}\.\w+\s*\("
        return Query(pattern, cand.kind, False, lang_name, cand.name, "usage", weight, 2)

    def _wildcards(self, ctx: LocalContext, cands: list[Candidate], weight: float) -> list[Query]:
        lang = ctx.lang
        out: list[Query] = []
        for cand in cands:
            name = escape_identifier(cand.name)
            if cand.member_of == "wildcard":  # receiver `self.data_loader.` → class *DataLoader
                out.append(
                    Query(
                        self._class_wildcard(name, lang),
                        "class",
                        False,
                        lang,
                        cand.name,
                        "wildcard",
                        weight,
                        4,
                    )
                )
            elif cand.member_of == "prefix":
                out.append(
                    Query(
                        self._class_prefix_wildcard(name, lang)
                        if cand.kind == "class"
                        else self._method_wildcard(name, lang),
                        cand.kind,
                        False,
                        lang,
                        cand.name,
                        "wildcard",
                        weight,
                        3,
                    )
                )
        if ctx.empty_body and ctx.class_bases:
            for base in ctx.class_bases[:2]:
                base_name = base.rsplit(".", 1)[-1]
                if not IDENTIFIER_RE.fullmatch(base_name) or is_generic(base_name):
                    continue
                escaped = escape_identifier(base_name)
                if lang == "python":
                    pattern = rf"^\s*class\s+\w+\s*\([^)]*\b{escaped}\b"
                else:
                    pattern = rf"\b(extends|implements)\s+([\w.<>, ]*\b)?{escaped}\b"
                out.append(
                    Query(pattern, "class", False, lang, base_name, "wildcard", weight * 0.95, 4)
                )
        return out

    @staticmethod
    def _class_wildcard(name: str, lang: str | None) -> str:
        if lang == "python":
            return rf"^\s*class\s+\w*{name}\b"
        return rf"\b(class|interface|struct|type)\s+\w*{name}\b"

    @staticmethod
    def _class_prefix_wildcard(name: str, lang: str | None) -> str:
        if lang == "python":
            return rf"^\s*class\s+{name}\w*|^{name}\w*\s*="
        return rf"\b(class|interface|enum|record|struct|trait|type)\s+{name}\w*"

    @staticmethod
    def _method_wildcard(name: str, lang: str | None) -> str:
        if lang == "python":
            return rf"^\s*(async\s+)?def\s+{name}\w*\s*\("
        if lang == "go":
            return rf"^func\s+(\([^)]*\)\s*)?{name}\w*\s*\("
        if lang == "rust":
            return rf"\bfn\s+{name}\w*\s*[<(]"
        return rf"\b{name}\w*\s*\([^;]*\)\s*(\{{|throws|:|=>)"

    def type_probes(self, ctx: LocalContext, types: list[str], weight: float) -> list[Query]:
        """Definition probes for class names found by a second look (see the pipeline)."""
        probes = []
        for name in types:
            if IDENTIFIER_RE.fullmatch(name):
                query = self._definition(Candidate(name, "class"), ctx.lang, weight)
                if query is not None:
                    probes.append(replace(query, purpose="second hop"))
        return probes

    # -- the plan --------------------------------------------------------------------
    def plan(self, ctx: LocalContext, imported: dict[str, str] | None = None) -> QueryPlan:
        """Rank identifiers, then emit definition, usage and wildcard queries (≤ max).

        ``imported`` maps the names the file imports from the repo to their files.
        """
        imported = imported or {}
        in_repo = set(imported)
        blanked = _blank_docstrings(ctx.before)  # once per plan: harvest and import probes
        harvested = self._harvest(ctx, in_repo, blanked)
        targets = self._cursor_targets(ctx)
        if ctx.empty_body:
            targets += self._empty_body_targets(ctx, in_repo)
        else:
            targets += self._base_targets(ctx, 1.0, in_repo)
        ranked: dict[str, Candidate] = {}
        for cand in targets:
            existing = ranked.get(cand.name)
            if existing is None or cand.score > existing.score:
                ranked[cand.name] = cand
        for name, cand in harvested.items():
            if name in ranked:
                ranked[name].score += cand.score
            else:
                ranked[name] = cand
        ordered = sorted(ranked.values(), key=lambda c: -c.score)
        ordered = [c for c in ordered if len(c.name) > 1]
        top = ordered[0].score if ordered else 1.0
        queries: list[Query] = []
        wildcard_sources = [c for c in ordered if c.member_of in ("wildcard", "prefix")]
        queries += self._wildcards(ctx, wildcard_sources, 1.0)
        queries += self._import_probes(ctx, imported, _code_without_imports(blanked))
        definitions = [
            c
            for c in ordered
            if c.member_of not in ("wildcard", "prefix") and "defined in this file" not in c.reasons
        ]
        usage_sources = [c for c in ordered if not is_generic(c.name) and c.member_of != "prefix"]
        n_usage = 0
        for cand in definitions:
            if len(queries) >= self.max_queries:
                break
            if is_generic(cand.name) and cand.score < 1.0:
                continue
            weight = min(1.0, cand.score / top)
            query = self._definition(cand, ctx.lang, weight)
            if query is not None and query not in queries:
                queries.append(query)
        for cand in usage_sources[:4]:
            if n_usage >= 3:
                break
            usage = self._usage(cand, ctx.lang, 0.7 * min(1.0, cand.score / top))
            if usage in queries:
                continue
            if len(queries) >= self.max_queries:
                # make room: replace the weakest definition probe
                weakest = min(
                    (q for q in queries if q.purpose == "definition"),
                    key=lambda q: q.weight,
                    default=None,
                )
                if weakest is None or weakest.weight >= usage.weight:
                    break
                queries.remove(weakest)
            queries.append(usage)
            n_usage += 1
        literal = self._string_key(ctx)
        if literal is not None:
            if len(queries) >= self.max_queries:
                weakest = min(queries, key=lambda q: q.weight)
                if weakest.weight < literal.weight:
                    queries.remove(weakest)
            if len(queries) < self.max_queries:
                queries.append(literal)
        queries.sort(key=lambda q: -q.weight)
        return QueryPlan(queries=queries[: self.max_queries], router=self.name)

    def _import_probes(self, ctx: LocalContext, imported: dict[str, str], code: str) -> list[Query]:
        """Definitions of the in-repo names the file imports: unused ones first.

        At the first use of an imported name its only mention before the cursor is the
        import line, so the window says nothing about it. Names already used in code
        make a second, weaker probe: they are the file's vocabulary for the next line.
        Generic names (``init``, ``run``) are probed only in the files they come from.
        """
        template = _IMPORT_TEMPLATES.get(ctx.lang or "")
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
            if is_generic(name):
                generic[name] = imported[ref.local_name]
                continue
            bucket = known if (name in used or ref.local_name in used) else fresh
            if name not in bucket:
                bucket.append(name)
        groups = [(fresh, 0.75, ()), (known, 0.45, ())]
        if generic:
            groups.append((list(generic), 0.45, tuple(sorted(set(generic.values())))))
        groups += self._module_member_groups(ctx, imported, code)
        probes = []
        for names, weight, files in groups:
            if not names:
                continue
            names = names[-IMPORT_PROBE_MAX:]  # the latest imports are the likeliest next
            if names == [ANY_NAME]:
                group = r"([A-Za-z_]\w*)"
            else:
                group = "(" + "|".join(escape_identifier(n) for n in names) + ")"
            kind = "class" if sum(n[:1].isupper() for n in names) * 2 >= len(names) else "method"
            pattern = template.replace("{names}", group)
            probes.append(
                Query(
                    pattern,
                    kind,
                    False,
                    ctx.lang,
                    ",".join(names),
                    "import",
                    weight,
                    4,
                    paths=files,
                )
            )
        return probes

    @staticmethod
    def _module_member_groups(
        ctx: LocalContext, imported: dict[str, str], code: str
    ) -> list[tuple[list[str], float, tuple[str, ...]]]:
        """``from . import errors`` then ``errors.StrError``: the module's members in use.

        The members this file already takes from an in-repo module are probed in that
        module's file only; with ``errors.`` at the cursor, so is every top-level name.
        """
        if ctx.lang != "python":
            return []
        groups: list[tuple[list[str], float, tuple[str, ...]]] = []
        for ref in ctx.imports:
            path = imported.get(ref.local_name)
            stem = path.rsplit("/", 1)[-1].removesuffix(".py") if path else ""
            if not path or (ref.local_name not in (stem, "__init__") and (ref.name or "") != stem):
                continue  # not a module import
            alias = re.escape(ref.local_name)
            members = list(dict.fromkeys(re.findall(rf"\b{alias}\.([A-Za-z_]\w*)", code)))
            if ctx.prefix.rstrip().endswith(f"{ref.local_name}."):
                groups.append(([ANY_NAME], 1.0, (path,)))
            elif members:
                groups.append((members[-IMPORT_PROBE_MAX:], 0.6, (path,)))
        return groups

    @staticmethod
    def _string_key(ctx: LocalContext) -> Query | None:
        """A key-like string literal by the cursor (``cfg.get("timeout"``): its other uses."""
        for line in reversed(ctx.window.split("\n")[-3:]):
            keys = _KEY_LITERAL.findall(line)
            if keys:
                key = keys[-1][1]
                pattern = "[\"']" + escape_regex_literal(key) + "[\"']"
                return Query(pattern, "other", False, ctx.lang, key, "usage", 0.4, 2)
        return None

    def _empty_body_targets(self, ctx: LocalContext, in_repo: set[str]) -> list[Candidate]:
        """An empty body: siblings with the same method name, the bases, the signature."""
        targets: list[Candidate] = []
        if ctx.enclosing_function and not is_generic(ctx.enclosing_function):
            targets.append(Candidate(ctx.enclosing_function, "method", 2.6, reasons=["sibling"]))
        return targets + self._base_targets(ctx, 2.9, in_repo)

    def _base_targets(self, ctx: LocalContext, score: float, in_repo: set[str]) -> list[Candidate]:
        """The enclosing class's bases and interfaces: the members it must honour."""
        targets = []
        externals = external_names(ctx, in_repo)
        for base in ctx.class_bases[:3]:
            name = base.rsplit(".", 1)[-1]
            if name in externals or base.split(".", 1)[0] in externals:
                continue
            if IDENTIFIER_RE.fullmatch(name) and name not in ("object", "ABC", "Object"):
                targets.append(Candidate(name, "class", score, reasons=["base class"]))
        return targets
