"""The offline router: deterministic keyword prediction into fixed rg templates.

Like the paper's distilled router, it only decides *which identifiers* to search for and
of what kind; the rg command comes from a fixed template per language and kind. It
ranks identifiers by how close they sit to the cursor (the receiver or callee at the
cursor first), prefers rare, in-repo names over generic or external ones, and mixes
definition probes with usage probes and a few wildcard ones (≤ 10 queries, and inside a
test up to two more for what its names name). Every tuned number is a field of
``RouterWeights``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from greprag.context import LocalContext
from greprag.languages import is_generic
from greprag.models import Query, QueryKind, QueryPlan
from greprag.router.names import (
    Name,
    blank_docstrings,
    by_original_name,
    open_call,
    parameter_types,
    rank,
    self_member,
)
from greprag.router.probes import (
    base_member_probes,
    code_without_imports,
    definition,
    fragment_probes,
    go_package_probes,
    go_receiver_probes,
    helper_probe,
    import_probes,
    module_aliases,
    string_key,
    subclass_probes,
    test_subject_probes,
    usage,
)

if TYPE_CHECKING:
    from greprag.config import Settings

__all__ = ["MAX_QUERIES", "OfflineRouter", "RouterWeights"]

MAX_QUERIES = 10


@dataclass(frozen=True)
class RouterWeights:
    """The offline router's tuned numbers (on the benchmark, docs/benchmarks.md).

    Name scores are relative: a cursor target scores 1-3, a window name at most about
    1.5; a probe's weight is its name's score over the best one (≤ 1), or fixed below.
    """

    # -- harvesting the window: a name's score is its proximity times these factors --
    proximity_decay: float = 0.35  # proximity = 1 / (1 + decay × lines above the cursor)
    defined_here: float = 0.25  # the current file defines it
    imported_from_repo: float = 1.5  # the file imports it from the repo
    generic: float = 0.2  # ``init``, ``config``, ``run``: floods when searched
    bare_variable: float = 0.35  # a lowercase name neither dotted nor imported: a local
    repeat_bonus: float = 0.05  # each further mention adds this share of its score
    window_receiver_type: float = 0.9  # ``self.x.y`` with x's type in view: the type
    # -- the cursor's own targets (scores) ---------------------------------------------
    receiver_type: float = 3.0  # ``x.`` with x's type known
    receiver_guess: float = 1.2  # ``data_loader.`` with no type: a ``*DataLoader`` class
    receiver: float = 2.0  # the receiver ``x`` itself
    member_prefix: float = 2.5  # ``x.lo``: a member starting with ``lo``
    typed_prefix: float = 2.4  # a half-typed word
    open_call: float = 2.8  # ``load(``: the callee
    declared_type: float = 3.0  # ``OrderStatus status = ``
    bound_name: float = 1.1  # ``self._cookies = ``: a ``*Cookies`` class
    sibling: float = 2.6  # an empty body: other methods of the same name
    empty_body_base: float = 2.9  # an empty body: the enclosing class's bases
    base: float = 1.0  # elsewhere: the enclosing class's bases
    # -- probe weights -------------------------------------------------------------------
    wildcard: float = 1.0  # a fragment's wildcard (``class \w*DataLoader``)
    subclass_wildcard: float = 0.95  # an empty body: classes sharing its bases
    usage: float = 0.7  # times the name's relative score
    string_key: float = 0.4  # other uses of a key-like string literal by the cursor
    import_unused: float = 0.75  # in-repo names imported, not yet used in code
    import_unused_usage: float = 0.5  # their uses in other files
    import_used: float = 0.45  # in-repo names imported and already used
    import_generic: float = 0.45  # generic imported names, in their own files only
    module_members: float = 0.6  # an imported module's members this file uses
    module_at_cursor: float = 1.0  # ``errors.`` at the cursor: all of the module's names
    module_unused: float = 0.7  # an imported module not yet used: all of its names
    module_just_used: float = 0.5  # a module used just above a line start: all of its names
    base_member: float = 1.0  # ``self.lo``: members starting with ``lo`` in the bases' files
    test_subject: float = 0.75  # in ``test_format_pos``: ``def format_pos`` and the like
    own_helpers: float = 0.6  # an empty ``remove``: ``removeMapping`` in the file, below
    # -- how many --------------------------------------------------------------------------
    generic_min_score: float = 1.0  # a generic name gets a definition probe from here up
    usage_pool: int = 4  # usage probes are drawn from the best this many names
    max_usage: int = 3  # at most this many usage probes


class OfflineRouter:
    """Plan ≤ ``max_queries`` rg queries from a LocalContext, no model needed (inside a
    test, up to two more: ``test_subject_probes``)."""

    name = "offline"

    def __init__(
        self, max_queries: int = MAX_QUERIES, *, weights: RouterWeights = RouterWeights()
    ) -> None:
        self.max_queries = max_queries
        self.weights = weights

    @classmethod
    def from_settings(cls, settings: Settings) -> OfflineRouter:
        return cls(settings.max_queries)

    def plan(self, ctx: LocalContext, imported: dict[str, str] | None = None) -> QueryPlan:
        """Rank names, then emit wildcard, import, definition, usage and string-key probes.

        ``imported`` maps the names the file imports from the repo to their files.
        """
        w = self.weights
        imported = imported or {}
        blanked = blank_docstrings(ctx.before, ctx.lang)  # once per plan: names and import probes
        modules = module_aliases(ctx, imported)
        names = by_original_name(rank(ctx, set(imported), blanked, w), ctx.imports, modules)
        top = names[0].score if names else 1.0
        queries = fragment_probes(ctx.lang, [n for n in names if n.fragment], w.wildcard)
        queries += subclass_probes(ctx, w.subclass_wildcard)
        queries += import_probes(ctx, imported, code_without_imports(blanked), w)
        queries += go_package_probes(ctx, imported, w.module_at_cursor)
        queries += go_receiver_probes(ctx, imported, w.module_at_cursor)
        self._add_definitions(queries, [n for n in names if n.name not in modules], ctx.lang, top)
        self._add_usages(queries, names, ctx.lang, top)
        literal = string_key(ctx, w.string_key)
        if literal is not None:
            if len(queries) >= self.max_queries:
                weakest = min(queries, key=lambda q: q.weight)
                if weakest.weight < literal.weight:
                    queries.remove(weakest)
            if len(queries) < self.max_queries:
                queries.append(literal)
        queries.sort(key=lambda q: -q.weight)
        queries = queries[: self.max_queries]
        for query in self._must_haves(queries, ctx, imported):  # each displaces the weakest
            if len(queries) >= self.max_queries:
                queries.remove(min(queries, key=lambda q: q.weight))
            queries.append(query)
        # slots of their own: they often find nothing, and displacing probes for them cost
        # line tasks their gold (docs/benchmarks.md)
        queries += self._test_subjects(queries, ctx)
        helpers = helper_probe(ctx, w.own_helpers)
        if helpers is not None and helpers not in queries:
            queries.append(helpers)
        queries = _parameter_types_wanted(queries, ctx)
        queries.sort(key=lambda q: -q.weight)
        return QueryPlan(queries=queries, router=self.name)

    def complete(
        self, plan: QueryPlan, ctx: LocalContext, imported: dict[str, str] | None = None
    ) -> QueryPlan:
        """``plan`` (another router's, a model's) with the probes this router never plans
        without, after its own queries: the router gaps stay closed whoever plans. A
        model ranks its queries by order, not weight, so none of them is displaced."""
        queries = list(plan.queries)
        queries += self._must_haves(queries, ctx, imported or {})
        queries += self._test_subjects(queries, ctx)
        return replace(plan, queries=queries)

    def _test_subjects(self, queries: list[Query], ctx: LocalContext) -> list[Query]:
        """Inside a test, the probes of what its names name that ``queries`` lack."""
        return [q for q in test_subject_probes(ctx, self.weights.test_subject) if q not in queries]

    def _must_haves(
        self, queries: list[Query], ctx: LocalContext, imported: dict[str, str]
    ) -> list[Query]:
        """The probes no plan goes without that ``queries`` lack: the definition of an
        open call whose import is traced (in the file it comes from), and on ``self.`` the
        member in the files of the bases the class imports."""
        must: list[Query] = []
        call = open_call(ctx.prefix)
        if call and call[0] in imported:
            probed = any(
                q.identifier == call[0] and q.purpose == "definition" and not q.paths
                for q in queries
            )
            if not probed:
                traced = definition(call[0], _kind_of_import(call[0]), ctx.lang, 1.0)
                must.append(replace(traced, paths=(imported[call[0]],)))
        member = self_member(ctx)
        if member is not None:
            must += base_member_probes(ctx, imported, member, self.weights.base_member)
        return [q for q in dict.fromkeys(must) if q not in queries]

    def _add_definitions(
        self, queries: list[Query], names: list[Name], lang: str | None, top: float
    ) -> None:
        """Definition probes, best name first, until the plan is full."""
        for name in names:
            if name.fragment or name.defined_here:
                continue
            if len(queries) >= self.max_queries:
                break
            if is_generic(name.name) and name.score < self.weights.generic_min_score:
                continue
            query = definition(name.name, name.kind, lang, min(1.0, name.score / top))
            if query not in queries:
                queries.append(query)

    def _add_usages(
        self, queries: list[Query], names: list[Name], lang: str | None, top: float
    ) -> None:
        """Usage probes for the best few names, each displacing a weaker definition."""
        w = self.weights
        sources = [n for n in names if not is_generic(n.name) and n.fragment != "prefix"]
        added = 0
        for name in sources[: w.usage_pool]:
            if added >= w.max_usage:
                break
            probe = usage(name, lang, w.usage * min(1.0, name.score / top))
            if probe in queries:
                continue
            if len(queries) >= self.max_queries:
                weakest = min(
                    (q for q in queries if q.purpose == "definition"),
                    key=lambda q: q.weight,
                    default=None,
                )
                if weakest is None or weakest.weight >= probe.weight:
                    break
                queries.remove(weakest)
            queries.append(probe)
            added += 1


def _parameter_types_wanted(queries: list[Query], ctx: LocalContext) -> list[Query]:
    """In an empty body, the class probes of the parameters' types as second hops: the
    body will call their members, so they show member signatures and are never compact."""
    if not ctx.empty_body:
        return queries
    types = parameter_types(ctx)
    return [
        replace(q, purpose="second hop")
        if q.purpose == "definition" and q.kind == "class" and not q.paths and q.identifier in types
        else q
        for q in queries
    ]


def _kind_of_import(name: str) -> QueryKind:
    """A class for a capitalised name, else a function."""
    return "class" if name[:1].isupper() else "method"
