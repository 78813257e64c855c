"""Java projects via tree-sitter: type index, imports resolved to declarations, member lookup."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node, Tree

from bench.facts import COMMON_METHODS, Location, Target, Use, first_positions
from bench.treesitter import captures, cursor, occurrences, parse, same, text

_TYPES = frozenset({"class_declaration", "interface_declaration", "enum_declaration",
                    "record_declaration", "annotation_type_declaration"})
_BODIES = frozenset({"class_body", "interface_body", "enum_body", "enum_body_declarations",
                     "annotation_type_body"})
_IDS = frozenset({"identifier", "type_identifier"})
_MAX_HOPS = 6
_INVOCATIONS = "(method_invocation object: (_) name: (identifier) @m)"
# Methods of java.lang and the collection interfaces: a project method of the same name is
# no evidence that a call resolves to it.
_JAVA_LANG = """
getClass notify notifyAll wait finalize charAt codePointAt compareToIgnoreCase concat
contentEquals endsWith equalsIgnoreCase getBytes getChars indexOf intern lastIndexOf matches
regionMatches replace replaceAll replaceFirst startsWith subSequence substring toCharArray
toLowerCase toUpperCase trim strip isBlank lines repeat chars format formatted append insert
reverse setLength setCharAt deleteCharAt capacity ensureCapacity intValue longValue
floatValue doubleValue byteValue shortValue booleanValue charValue parseInt parseLong
getMessage getCause initCause printStackTrace getStackTrace addSuppressed getLocalizedMessage
getSimpleName getSuperclass getInterfaces isInstance isAssignableFrom getComponentType
isArray isPrimitive newInstance getMethod getMethods getDeclaredMethod getDeclaredMethods
getField getFields getDeclaredField getDeclaredFields getConstructor getConstructors
getModifiers getClassLoader getResource getResourceAsStream forName loadClass
currentThread interrupt isInterrupted sleep getContextClassLoader setDaemon
addAll removeAll retainAll containsAll containsKey containsValue entrySet keySet values
putAll putIfAbsent getOrDefault computeIfAbsent hasNext hasMoreElements nextElement
toArray subList listIterator indexOf stream forEach getKey getValue getProperty
arraycopy currentTimeMillis nanoTime identityHashCode exit println print write read
"""
_JAVA_LANG_METHODS = frozenset(_JAVA_LANG.split())


@dataclass
class _Type:
    fqcn: str
    location: Location
    members: dict[str, list[Location]] = field(default_factory=dict)
    supers: list[str] = field(default_factory=list)
    method_names: set[str] = field(default_factory=set)
    file: _File | None = None


@dataclass
class _File:
    path: str
    source: bytes
    tree: Tree
    lines: list[str]
    package: str = ""
    imports: dict[str, str] = field(default_factory=dict)  # simple name → fqcn
    wildcards: list[str] = field(default_factory=list)
    import_end: int = 0


def _location(path: str, node: Node, name: Node) -> Location:
    return Location(path, name.start_point[0] + 1, node.start_point[0] + 1, node.end_point[0] + 1)


def _member_names(node: Node) -> list[Node]:
    if node.type in ("field_declaration", "constant_declaration"):
        return [d.child_by_field_name("name") for d in node.children_by_field_name("declarator")]
    name = node.child_by_field_name("name")
    kinds = ("method_declaration", "enum_constant", "annotation_type_element_declaration")
    return [name] if name is not None and (node.type in kinds or node.type in _TYPES) else []


class JavaProject:
    """Type declarations of every file, by fully qualified name."""

    def __init__(self, root: Path, files: list[str]):
        self.files: list[_File] = []
        self.types: dict[str, _Type] = {}
        for rel in files:
            source = (root / rel).read_bytes()
            jf = _File(rel, source, parse("java", source),
                       source.decode("utf-8", errors="replace").split("\n"))
            self._header(jf)
            for child in jf.tree.root_node.children:
                self._declare(jf, child, jf.package)
            self.files.append(jf)

    def _header(self, jf: _File) -> None:
        for child in jf.tree.root_node.children:
            if child.type == "package_declaration":
                jf.package = text(child.named_children[-1]) if child.named_children else ""
            elif child.type == "import_declaration":
                jf.import_end = child.end_byte
                spelled = text(child)
                if " static " in f" {spelled} ":
                    continue
                target = spelled.removeprefix("import").rstrip(";").strip()
                if target.endswith(".*"):
                    jf.wildcards.append(target[:-2])
                else:
                    jf.imports[target.rsplit(".", 1)[-1]] = target

    def _declare(self, jf: _File, node: Node, scope: str) -> None:
        if node.type not in _TYPES:
            return
        name = node.child_by_field_name("name")
        if name is None:
            return
        fqcn = f"{scope}.{text(name)}" if scope else text(name)
        info = _Type(fqcn, _location(jf.path, node, name), file=jf)
        for clause in ("superclass", "interfaces"):
            sub = node.child_by_field_name(clause)
            if sub is not None:
                info.supers.extend(text(n) for n in captures("java", "(type_identifier) @t", sub)
                                   .get("t", []))
        self.types[fqcn] = info
        body = node.child_by_field_name("body")
        for member in self._body_members(body):
            for member_name in _member_names(member):
                info.members.setdefault(text(member_name), []).append(
                    _location(jf.path, member, member_name))
                if member.type == "method_declaration":
                    info.method_names.add(text(member_name))
            self._declare(jf, member, fqcn)

    def _body_members(self, body: Node | None) -> list[Node]:
        if body is None:
            return []
        out: list[Node] = []
        for child in body.named_children:
            out.extend(self._body_members(child) if child.type in _BODIES else [child])
        return out

    def resolve(self, jf: _File, simple: str) -> _Type | None:
        for fqcn in (jf.imports.get(simple), f"{jf.package}.{simple}",
                     *(f"{w}.{simple}" for w in jf.wildcards)):
            if fqcn and fqcn in self.types:
                return self.types[fqcn]
        return None

    def member(self, info: _Type, name: str, hops: int = 0) -> Target:
        if name in info.members:
            return tuple(info.members[name])
        if hops < _MAX_HOPS and info.file is not None:
            for sup in info.supers:
                parent = self.resolve(info.file, sup)
                found = self.member(parent, name, hops + 1) if parent else ()
                if found:
                    return found
        return ()

    def methods(self) -> dict[str, list[tuple[str, Location]]]:
        table: dict[str, list[tuple[str, Location]]] = defaultdict(list)
        for info in self.types.values():
            for name in info.method_names:
                table[name].extend((info.fqcn, loc) for loc in info.members[name])
        return table


def _member_of(node: Node) -> tuple[str | None, bool]:
    """(accessed member, is a call) for a name used as ``Name.member`` / ``new Name(``."""
    parent = node.parent
    while parent is not None and parent.type == "generic_type":
        node, parent = parent, parent.parent
    if parent is None:
        return None, False
    if parent.type == "method_invocation" and same(parent.child_by_field_name("object"), node):
        return text(parent.child_by_field_name("name")), True
    if parent.type == "field_access" and same(parent.child_by_field_name("object"), node):
        return text(parent.child_by_field_name("field")), False
    return None, parent.type == "object_creation_expression"


def _import_uses(project: JavaProject, jf: _File) -> list[Use]:
    uses: list[Use] = []
    for simple, fqcn in jf.imports.items():
        info = project.types.get(fqcn)
        if info is None or info.location.path == jf.path:
            continue
        for index, node in enumerate(occurrences(jf.tree, jf.source, simple, jf.import_end, _IDS)):
            member, is_call = _member_of(node)
            member_gold = project.member(info, member) if member else ()
            line, column = cursor(node, jf.lines)
            uses.append(Use(jf.path, line, column, simple, member if member_gold else None,
                            (info.location,), member_gold, is_call, index == 0))
    return uses


def _implicit_uses(jf: _File, methods: dict[str, list[tuple[str, Location]]]) -> list[Use]:
    first = first_positions("\n".join(jf.lines))
    uses: list[Use] = []
    for node in captures("java", _INVOCATIONS, jf.tree.root_node).get("m", []):
        name = text(node)
        defs = methods.get(name, [])
        if (not defs or len(name) < 4 or name in COMMON_METHODS or name in _JAVA_LANG_METHODS
                or len({c for c, _ in defs}) != 1):
            continue
        simple = defs[0][0].rsplit(".", 1)[-1]
        line, column = cursor(node, jf.lines)
        if (defs[0][1].path == jf.path or simple in first
                or first.get(name, (0, 0)) < (line, column)):
            continue
        uses.append(Use(jf.path, line, column, name, None, tuple(loc for _, loc in defs), (),
                        True, True, kind="implicit"))
    return uses


def analyze(root: Path, files: list[str]) -> list[Use]:
    """Every resolved import use and implicit method call in the project's Java files."""
    project = JavaProject(root, [f for f in files if f.endswith(".java")])
    methods = project.methods()
    uses: list[Use] = []
    for jf in project.files:
        uses.extend(_import_uses(project, jf))
        uses.extend(_implicit_uses(jf, methods))
    return uses
