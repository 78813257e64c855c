"""Java projects via tree-sitter: type index, imports resolved to declarations, member lookup."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node, Tree

from bench.facts import (
    COMMON_METHODS,
    Body,
    Location,
    Target,
    Use,
    body_size_ok,
    char_column,
    first_code_line,
    first_positions,
)
from bench.treesitter import captures, cursor, occurrences, parse, same, text

_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_BODIES = frozenset(
    {"class_body", "interface_body", "enum_body", "enum_body_declarations", "annotation_type_body"}
)
_IDS = frozenset({"identifier", "type_identifier"})
_MAX_HOPS = 6
WIDE_MAX_CLASSES = 3
_INVOCATIONS = "(method_invocation object: (_) name: (identifier) @m)"
_DECLARATIONS = """[(local_variable_declaration) (field_declaration) (formal_parameter)
(spread_parameter) (enhanced_for_statement) (catch_formal_parameter) (resource)] @d"""
_IMPLICIT_SITES = (
    (_INVOCATIONS, "methods"),
    ("(method_invocation !object name: (identifier) @m)", "methods"),  # inherited, ``this``
    ("(field_access object: (_) field: (identifier) @m)", "fields"),
)
_CHAINS = frozenset(
    {"field_access", "method_invocation", "array_access", "parenthesized_expression"}
)
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
            jf = _File(
                rel,
                source,
                parse("java", source),
                source.decode("utf-8", errors="replace").split("\n"),
            )
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
                info.supers.extend(
                    text(n) for n in captures("java", "(type_identifier) @t", sub).get("t", [])
                )
        self.types[fqcn] = info
        body = node.child_by_field_name("body")
        for member in self._body_members(body):
            for member_name in _member_names(member):
                info.members.setdefault(text(member_name), []).append(
                    _location(jf.path, member, member_name)
                )
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
        for fqcn in (
            jf.imports.get(simple),
            f"{jf.package}.{simple}",
            *(f"{w}.{simple}" for w in jf.wildcards),
        ):
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

    def fields(self) -> dict[str, list[tuple[str, Location]]]:
        """Field (and other non-method member) name → (class, location) over every class."""
        table: dict[str, list[tuple[str, Location]]] = defaultdict(list)
        for info in self.types.values():
            for name, locations in info.members.items():
                if name not in info.method_names:
                    table[name].extend((info.fqcn, loc) for loc in locations)
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
            uses.append(
                Use(
                    jf.path,
                    line,
                    column,
                    simple,
                    member if member_gold else None,
                    (info.location,),
                    member_gold,
                    is_call,
                    index == 0,
                )
            )
    return uses


def _simple_type(node: Node | None) -> str:
    """``Map.Entry<K, V>[]`` → ``Entry``."""
    spelled = text(node).split("<", 1)[0].split("[", 1)[0].strip()
    return spelled.rsplit(".", 1)[-1]


def _declared_types(jf: _File) -> dict[str, set[str]]:
    """Variable name → simple names of the types it is declared with anywhere in the file."""
    types: dict[str, set[str]] = defaultdict(set)
    for decl in captures("java", _DECLARATIONS, jf.tree.root_node).get("d", []):
        kind = _simple_type(decl.child_by_field_name("type"))
        names = [d.child_by_field_name("name") for d in decl.children_by_field_name("declarator")]
        for name in [*names, decl.child_by_field_name("name")]:
            if name is not None:
                types[text(name)].add(kind)
    return types


def _receiver_in_project(
    receiver: Node | None, declared: dict[str, set[str]], project_types: frozenset[str]
) -> bool:
    """False when the receiver's root is visibly outside the project: a variable declared
    only with non-project types, a class name, a literal; True when it may be a project
    object (``this``, an inherited field, an own method's result, a ``var``)."""
    while receiver is not None and receiver.type in _CHAINS:
        if receiver.type == "parenthesized_expression":
            receiver = receiver.named_children[0] if receiver.named_children else None
        else:
            receiver = receiver.child_by_field_name(
                "array" if receiver.type == "array_access" else "object"
            )
    if receiver is None or receiver.type in ("this", "super"):
        return True
    if receiver.type in ("cast_expression", "object_creation_expression"):
        return _simple_type(receiver.child_by_field_name("type")) in project_types
    if receiver.type != "identifier":
        return False
    kinds = declared.get(text(receiver))
    if kinds is None:
        return not text(receiver)[:1].isupper()  # an inherited field, not a class name
    return "var" in kinds or bool(kinds & project_types)


def _implicit_uses(
    jf: _File,
    tables: dict[str, dict[str, list[tuple[str, Location]]]],
    project_types: frozenset[str],
) -> list[Use]:
    """Uses of a project member whose name and classes the left context never names.

    Kinds: ``implicit`` (``recv.method(`` of one class never named in the file, on a receiver
    that may be a project object), ``implicit-loose`` (the same, but the receiver is visibly
    outside the project: kept in the default mix as it always was) and ``implicit-wide``
    (the subset's extra: up to ``WIDE_MAX_CLASSES`` classes, named, if at all, only below
    the cursor; also inherited ``method(`` calls and ``recv.field`` accesses).
    """
    first = first_positions("\n".join(jf.lines))
    declared: dict[str, set[str]] | None = None
    uses: list[Use] = []
    for pattern, table_name in _IMPLICIT_SITES:
        table = tables[table_name]
        for node in captures("java", pattern, jf.tree.root_node).get("m", []):
            name = text(node)
            defs = table.get(name, [])
            owners = {fqcn for fqcn, _ in defs}
            if (
                not defs
                or len(name) < 4
                or name in COMMON_METHODS
                or name in _JAVA_LANG_METHODS
                or len(owners) > WIDE_MAX_CLASSES
            ):
                continue
            simple = {fqcn.rsplit(".", 1)[-1] for fqcn in owners}
            at = cursor(node, jf.lines)
            if (
                any(loc.path == jf.path for _, loc in defs)
                or first.get(name, at) < at
                or any(first.get(s, at) < at for s in simple)
            ):
                continue
            declared = _declared_types(jf) if declared is None else declared
            inside = _receiver_in_project(
                node.parent.child_by_field_name("object"), declared, project_types
            )
            if pattern == _INVOCATIONS and len(owners) == 1 and not simple & first.keys():
                kind = "implicit" if inside else "implicit-loose"
            elif inside:
                kind = "implicit-wide"
            else:
                continue
            uses.append(
                Use(
                    jf.path,
                    *at,
                    name,
                    None,
                    tuple(loc for _, loc in defs),
                    (),
                    table_name == "methods",
                    True,
                    kind=kind,
                )
            )
    return uses


def analyze(root: Path, files: list[str]) -> list[Use]:
    """Every resolved import use and implicit method call in the project's Java files."""
    project = JavaProject(root, [f for f in files if f.endswith(".java")])
    tables = {"methods": project.methods(), "fields": project.fields()}
    project_types = frozenset(fqcn.rsplit(".", 1)[-1] for fqcn in project.types)
    uses: list[Use] = []
    for jf in project.files:
        uses.extend(_import_uses(project, jf))
        uses.extend(_implicit_uses(jf, tables, project_types))
    return uses


_METHOD_BODIES = """[(method_declaration body: (block) @b)
(constructor_declaration body: (constructor_body) @b)]"""


def _body(jf: _File, block: Node) -> Body | None:
    """The body of a method declared in a named type (anonymous classes left out)."""
    method = block.parent
    holder = method.parent if method is not None else None
    if method is None or holder is None or holder.type not in _BODIES:
        return None
    owner = holder.parent.parent if holder.type == "enum_body_declarations" else holder.parent
    if owner is None or owner.type not in _TYPES:
        return None
    statements = [c for c in block.named_children if not c.type.endswith("comment")]
    if not statements or statements[0].start_point[0] <= block.start_point[0]:
        return None  # empty, or a body that starts on the brace's line
    brace_line = block.start_point[0] + 1
    end_line = statements[-1].end_point[0] + 1
    line = first_code_line(jf.lines, brace_line, end_line + 1)
    if line is None or not body_size_ok(line, end_line):
        return None
    first = jf.lines[line - 1]
    end_column = char_column(jf.lines[end_line - 1], statements[-1].end_point[1])
    name = text(method.child_by_field_name("name"))
    return Body(jf.path, line, len(first) - len(first.lstrip()), end_line, end_column, name)


def function_bodies(root: Path, files: list[str]) -> list[Body]:
    """Every method and constructor body of 2-30 lines in a named type, cursor on the
    first non-blank line after the opening brace."""
    project = JavaProject(root, [f for f in files if f.endswith(".java")])
    bodies = []
    for jf in project.files:
        for block in captures("java", _METHOD_BODIES, jf.tree.root_node).get("b", []):
            body = _body(jf, block)
            if body is not None:
                bodies.append(body)
    return bodies
