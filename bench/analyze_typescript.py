"""TypeScript projects via tree-sitter: ES module imports resolved to their declarations."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node, Tree

from bench.facts import COMMON_METHODS, Location, Target, Use, first_positions
from bench.treesitter import captures, cursor, occurrences, parse, same, text

_DECLARATIONS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "function_declaration",
        "function_signature",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "lexical_declaration",
        "variable_declaration",
    }
)
_MEMBERS = frozenset(
    {
        "method_definition",
        "public_field_definition",
        "method_signature",
        "property_signature",
        "abstract_method_signature",
    }
)
_IDS = frozenset({"identifier", "type_identifier"})
_MAX_HOPS = 8
_CALLS = "(call_expression function: (member_expression property: (property_identifier) @m))"
_JS_BUILTINS = """
includes indexOf lastIndexOf keys values entries has delete catch finally assign freeze
create defineProperty getPrototypeOf setPrototypeOf hasOwnProperty isArray some every find
findIndex reduce sort reverse fill flat flatMap toFixed trim padStart padEnd replace match
test exec charCodeAt fromCharCode startsWith endsWith substring toLowerCase toUpperCase
addEventListener removeEventListener setTimeout clearTimeout resolve reject race all
unsubscribe complete error next
"""
_EXCLUDED = COMMON_METHODS | frozenset(_JS_BUILTINS.split())


@dataclass
class _File:
    path: str
    source: bytes
    tree: Tree
    lines: list[str]
    grammar: str = "typescript"
    defs: dict[str, list[Location]] = field(default_factory=dict)
    classes: dict[str, dict[str, list[Location]]] = field(default_factory=dict)
    reexports: dict[str, tuple[str, str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local → (path, name)
    imported: set[str] = field(default_factory=set)  # every local an import binds, packages too
    import_end: int = 0


def _loc(path: str, node: Node, name: Node) -> Location:
    return Location(path, name.start_point[0] + 1, node.start_point[0] + 1, node.end_point[0] + 1)


def _declared_names(node: Node) -> list[Node]:
    if node.type in ("lexical_declaration", "variable_declaration"):
        return [
            n
            for d in node.named_children
            if d.type == "variable_declarator"
            if (n := d.child_by_field_name("name")) is not None and n.type == "identifier"
        ]
    name = node.child_by_field_name("name")
    return [name] if name is not None else []


class TypeScriptProject:
    """Every module's declarations, re-exports and imports, by repo-relative path."""

    def __init__(self, root: Path, files: list[str]):
        self.paths = set(files)
        self.files: dict[str, _File] = {}
        for rel in files:
            source = (root / rel).read_bytes()
            grammar = "tsx" if rel.endswith(".tsx") else "typescript"
            tf = _File(
                rel,
                source,
                parse(grammar, source),
                source.decode("utf-8", errors="replace").split("\n"),
                grammar,
            )
            for child in tf.tree.root_node.named_children:
                self._statement(tf, child)
            self.files[rel] = tf

    def module_path(self, importer: str, spec: str) -> str | None:
        """The project file an import specifier names; None for packages and misses."""
        if not spec.startswith("."):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        stem = base.removesuffix(".js").removesuffix(".mjs")
        for candidate in (base, f"{stem}.ts", f"{stem}.tsx", f"{stem}/index.ts"):
            if candidate in self.paths and candidate.endswith((".ts", ".tsx")):
                return candidate
        return None

    def _statement(self, tf: _File, node: Node) -> None:
        source_node = node.child_by_field_name("source")
        spec = text(source_node).strip("'\"`") if source_node is not None else ""
        if node.type == "import_statement":
            tf.import_end = node.end_byte
            target = self.module_path(tf.path, spec)
            clause = next((c for c in node.named_children if c.type == "import_clause"), None)
            if clause is not None:
                tf.imported.update(
                    text(n) for n in captures(tf.grammar, "(identifier) @i", clause).get("i", [])
                )
            if target is not None and clause is not None:
                self._import_clause(tf, clause, target)
            return
        if node.type == "export_statement" and source_node is not None:
            target = self.module_path(tf.path, spec)
            clause = next((c for c in node.named_children if c.type == "export_clause"), None)
            if target is None:
                return
            if clause is None:
                tf.stars.append(target)
            for spec_node in clause.named_children if clause is not None else []:
                name = text(spec_node.child_by_field_name("name"))
                alias = text(spec_node.child_by_field_name("alias")) or name
                tf.reexports[alias] = (target, name)
            return
        declaration = (
            node.child_by_field_name("declaration") if node.type == "export_statement" else node
        )
        if declaration is None or declaration.type not in _DECLARATIONS:
            return
        is_default = node.type == "export_statement" and any(
            c.type == "default" for c in node.children
        )
        for name in _declared_names(declaration):
            location = _loc(tf.path, declaration, name)
            tf.defs.setdefault(text(name), []).append(location)
            if is_default:
                tf.defs.setdefault("default", []).append(location)
        body = declaration.child_by_field_name("body")
        if body is not None and declaration.type != "function_declaration":
            members = tf.classes.setdefault(text(declaration.child_by_field_name("name")), {})
            for member in body.named_children:
                name = member.child_by_field_name("name")
                if member.type in _MEMBERS and name is not None:
                    members.setdefault(text(name), []).append(_loc(tf.path, member, name))

    @staticmethod
    def _import_clause(tf: _File, clause: Node, target: str) -> None:
        for child in clause.named_children:
            if child.type == "identifier":
                tf.imports[text(child)] = (target, "default")
            elif child.type == "namespace_import" and child.named_children:
                tf.imports[text(child.named_children[0])] = (target, None)
            elif child.type == "named_imports":
                for spec in child.named_children:
                    name = text(spec.child_by_field_name("name"))
                    alias = text(spec.child_by_field_name("alias")) or name
                    if name:
                        tf.imports[alias] = (target, name)

    def resolve(self, path: str, name: str, hops: int = 0) -> tuple[str, str] | None:
        """(path, name) of the declaration that module ``path`` exports as ``name``."""
        tf = self.files.get(path)
        if tf is None or hops > _MAX_HOPS:
            return None
        if name in tf.defs:
            return path, name
        if name in tf.reexports:
            return self.resolve(*tf.reexports[name], hops + 1)
        if name in tf.imports and tf.imports[name][1]:
            return self.resolve(tf.imports[name][0], tf.imports[name][1] or "", hops + 1)
        for star in tf.stars:
            found = self.resolve(star, name, hops + 1)
            if found:
                return found
        return None

    def methods(self) -> dict[str, list[tuple[str, Location]]]:
        table: dict[str, list[tuple[str, Location]]] = defaultdict(list)
        for tf in self.files.values():
            for cls, members in tf.classes.items():
                for name, locations in members.items():
                    table[name].extend((f"{tf.path}:{cls}", loc) for loc in locations)
        return table


def _member_of(node: Node) -> tuple[str | None, bool]:
    parent = node.parent
    if parent is None:
        return None, False
    if parent.type == "member_expression" and same(parent.child_by_field_name("object"), node):
        grand = parent.parent
        called = (
            grand is not None
            and grand.type == "call_expression"
            and same(grand.child_by_field_name("function"), parent)
        )
        return text(parent.child_by_field_name("property")), called
    if parent.type == "nested_type_identifier" and same(parent.child_by_field_name("module"), node):
        return text(parent.child_by_field_name("name")), False
    called = parent.type in ("call_expression", "new_expression") and same(
        parent.child_by_field_name("function") or parent.child_by_field_name("constructor"), node
    )
    return None, called


def _import_uses(project: TypeScriptProject, tf: _File) -> list[Use]:
    uses: list[Use] = []
    for local, (path, name) in tf.imports.items():
        for index, node in enumerate(occurrences(tf.tree, tf.source, local, tf.import_end, _IDS)):
            member, is_call = _member_of(node)
            if name is None:  # namespace import: the member is the definition sought
                resolved = project.resolve(path, member) if member else None
                member = None
            else:
                resolved = project.resolve(path, name)
            if resolved is None or resolved[0] == tf.path:
                continue
            defined_in = project.files[resolved[0]]
            members = defined_in.classes.get(resolved[1], {}) if resolved[1] != "default" else {}
            member_gold: Target = tuple(members.get(member, ())) if member else ()
            line, column = cursor(node, tf.lines)
            uses.append(
                Use(
                    tf.path,
                    line,
                    column,
                    local,
                    member if member_gold else None,
                    tuple(defined_in.defs[resolved[1]]),
                    member_gold,
                    is_call,
                    index == 0,
                )
            )
    return uses


def _receiver_root(node: Node) -> Node:
    fields = {
        "member_expression": "object",
        "call_expression": "function",
        "subscript_expression": "object",
        "non_null_expression": None,
    }
    while node.type in fields:
        inner = (
            node.child_by_field_name(fields[node.type])
            if fields[node.type]
            else node.named_children[0]
            if node.named_children
            else None
        )
        if inner is None:
            break
        node = inner
    return node


def _implicit_uses(tf: _File, methods: dict[str, list[tuple[str, Location]]]) -> list[Use]:
    first = first_positions("\n".join(tf.lines))
    uses: list[Use] = []
    for node in captures(tf.grammar, _CALLS, tf.tree.root_node).get("m", []):
        name = text(node)
        defs = methods.get(name, [])
        if not defs or len(name) < 4 or name in _EXCLUDED or len({c for c, _ in defs}) != 1:
            continue
        cls = defs[0][0].rsplit(":", 1)[-1]
        receiver = node.parent.child_by_field_name("object") if node.parent else None
        if receiver is not None and text(_receiver_root(receiver)) in tf.imported:
            continue
        line, column = cursor(node, tf.lines)
        if defs[0][1].path == tf.path or cls in first or first.get(name, (0, 0)) < (line, column):
            continue
        uses.append(
            Use(
                tf.path,
                line,
                column,
                name,
                None,
                tuple(loc for _, loc in defs),
                (),
                True,
                True,
                kind="implicit",
            )
        )
    return uses


def analyze(root: Path, files: list[str]) -> list[Use]:
    """Every resolved import use and implicit method call in the project's TypeScript files."""
    sources = [f for f in files if f.endswith((".ts", ".tsx")) and not f.endswith(".d.ts")]
    project = TypeScriptProject(root, sources)
    methods = project.methods()
    uses: list[Use] = []
    for tf in project.files.values():
        uses.extend(_import_uses(project, tf))
        uses.extend(_implicit_uses(tf, methods))
    return uses
