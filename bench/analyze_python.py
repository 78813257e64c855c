"""Python projects via ``ast``: module map, definitions, imports resolved to their definitions."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

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
    read_text,
    stdlib_attributes,
)

_MAX_HOPS = 6
WIDE_MAX_CLASSES = 3


@dataclass
class _Module:
    path: str
    tree: ast.Module
    lines: list[str]
    defs: dict[str, list[Location]] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local → (mod, name)
    stars: list[str] = field(default_factory=list)
    imported: set[str] = field(default_factory=set)  # every name an import statement binds


def _location(path: str, node: ast.AST) -> Location:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return Location(path, node.lineno, start, node.end_lineno or node.lineno)


def _module_name(rel: str) -> str:
    parts = rel[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _absolute(current: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    base = current.split(".") if current else []
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements, descending into if/try blocks."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out.extend(_top_level(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try):
            handlers = [s for h in stmt.handlers for s in h.body]
            out.extend(_top_level(stmt.body + handlers + stmt.orelse + stmt.finalbody))
    return out


def _assigned_names(stmt: ast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _scan(path: str, source: str, name: str) -> _Module | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    mod = _Module(path, tree, source.split("\n"))
    is_package = path.endswith("__init__.py")
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            mod.defs.setdefault(stmt.name, []).append(_location(path, stmt))
            if isinstance(stmt, ast.ClassDef):
                mod.classes[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            for target in _assigned_names(stmt):
                mod.defs.setdefault(target, []).append(_location(path, stmt))
        elif isinstance(stmt, ast.ImportFrom):
            source_mod = _absolute(name, is_package, stmt.module, stmt.level)
            for alias in stmt.names:
                if alias.name == "*":
                    mod.stars.append(source_mod)
                else:
                    mod.imports[alias.asname or alias.name] = (source_mod, alias.name)
                    mod.imported.add(alias.asname or alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                mod.imported.add(alias.asname or alias.name.split(".")[0])
                if alias.asname:
                    mod.imports[alias.asname] = (alias.name, None)
    return mod


class PythonProject:
    """All modules of a project and name resolution across them."""

    def __init__(self, root: Path, files: list[str]):
        self.modules: dict[str, _Module] = {}
        for rel in files:
            name = _module_name(rel)
            scanned = _scan(rel, read_text(root / rel), name)
            if scanned is not None:
                self.modules[name] = scanned
        self.module_names = {m.path: n for n, m in self.modules.items()}

    def resolve(self, module: str, name: str | None, hops: int = 0) -> tuple[str, str] | None:
        """(module, name) of the definition of ``module.name``; name "" when it is a module."""
        if hops > _MAX_HOPS:
            return None
        if name is None:
            return (module, "") if module in self.modules else None
        if f"{module}.{name}" in self.modules:
            return (f"{module}.{name}", "")
        mod = self.modules.get(module)
        if mod is None:
            return None
        if name in mod.defs:
            return (module, name)
        if name in mod.imports:
            source, original = mod.imports[name]
            return self.resolve(source, original, hops + 1)
        for star in mod.stars:
            found = self.resolve(star, name, hops + 1)
            if found:
                return found
        return None

    def member(self, module: str, cls: str, attr: str, hops: int = 0) -> Target:
        """Definitions of ``attr`` in class ``cls`` of ``module`` or its in-project bases."""
        mod = self.modules.get(module)
        node = mod.classes.get(cls) if mod else None
        if mod is None or node is None or hops > _MAX_HOPS:
            return ()
        found = [
            _location(mod.path, stmt)
            for stmt in node.body
            if (isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == attr)
            or (isinstance(stmt, ast.Assign | ast.AnnAssign) and attr in _assigned_names(stmt))
        ]
        if found:
            return tuple(found)
        for base in node.bases:
            if isinstance(base, ast.Name):
                resolved = self.resolve(module, base.id)
                if resolved and resolved[1]:
                    inherited = self.member(resolved[0], resolved[1], attr, hops + 1)
                    if inherited:
                        return inherited
        return ()

    def methods(self) -> dict[str, list[tuple[str, Location]]]:
        """Method name → (class name, location) over every class of the project."""
        table: dict[str, list[tuple[str, Location]]] = defaultdict(list)
        for mod in self.modules.values():
            for node in ast.walk(mod.tree):
                if isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                            table[stmt.name].append((node.name, _location(mod.path, stmt)))
        return table


def _name_uses(tree: ast.Module) -> tuple[list[ast.Name], dict[int, str], set[int]]:
    """Loaded names in source order, ``Name.attr`` members, and names that are called."""
    names: list[ast.Name] = []
    members: dict[int, str] = {}
    called: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.append(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            members[id(node.value)] = node.attr
        elif isinstance(node, ast.Call):
            func = node.func.value if isinstance(node.func, ast.Attribute) else node.func
            called.add(id(func))
    names.sort(key=lambda n: (n.lineno, n.col_offset))
    return names, members, called


def _import_uses(project: PythonProject, mod: _Module) -> list[Use]:
    names, members, called = _name_uses(mod.tree)
    import_end = max(
        (s.end_lineno or 0 for s in mod.tree.body if isinstance(s, ast.Import | ast.ImportFrom)),
        default=0,
    )
    seen: set[str] = set()
    uses: list[Use] = []
    for node in names:
        if node.id not in mod.imports or node.lineno <= import_end:
            continue
        resolved = project.resolve(*mod.imports[node.id])
        if resolved is None:
            continue
        target_mod, target_name = resolved
        member = members.get(id(node))
        member_gold: Target = ()
        if target_name == "":  # a module: the accessed member is the definition sought
            inner = project.resolve(target_mod, member) if member else None
            if inner is None or not inner[1]:
                continue
            (target_mod, target_name), member = inner, None
        elif member:
            member_gold = project.member(target_mod, target_name, member)
        defined_in = project.modules[target_mod]
        if defined_in.path == mod.path:
            continue
        line_text = mod.lines[node.lineno - 1]
        uses.append(
            Use(
                mod.path,
                node.lineno,
                char_column(line_text, node.col_offset),
                node.id,
                member if member_gold else None,
                tuple(defined_in.defs[target_name]),
                member_gold,
                id(node) in called,
                node.id not in seen,
            )
        )
        seen.add(node.id)
    return uses


def _receiver_root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _implicit_uses(mod: _Module, methods: dict[str, list[tuple[str, Location]]]) -> list[Use]:
    """Calls ``recv.method(`` of a project method whose name and classes the left context never
    names (kind ``implicit``: one class, never named in the file; ``implicit-wide``: up to
    ``WIDE_MAX_CLASSES`` classes, named, if at all, only below the cursor)."""
    source = "\n".join(mod.lines)
    excluded = COMMON_METHODS | stdlib_attributes()
    first = first_positions(source)
    uses: list[Use] = []
    for node in ast.walk(mod.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr = node.func
        name = attr.attr
        defs = methods.get(name, [])
        root = _receiver_root(attr.value)
        owners = {(cls, loc.path) for cls, loc in defs}
        classes = {cls for cls, _ in owners}
        if (
            not defs
            or name.startswith("__")
            or len(name) < 4
            or name in excluded
            or len(owners) > WIDE_MAX_CLASSES
            or (isinstance(root, ast.Name) and root.id in mod.imported)
        ):
            continue
        end_line = attr.end_lineno or attr.lineno
        line_text = mod.lines[end_line - 1]
        column = char_column(line_text, attr.end_col_offset or 0) - len(name)
        cursor = (end_line, column)
        if (
            any(loc.path == mod.path for _, loc in defs)
            or first.get(name, cursor) < cursor
            or any(first.get(cls, cursor) < cursor for cls in classes)
        ):
            continue
        strict = len(owners) == 1 and not classes & first.keys()
        uses.append(
            Use(
                mod.path,
                end_line,
                column,
                name,
                None,
                tuple(loc for _, loc in defs),
                (),
                True,
                True,
                kind="implicit" if strict else "implicit-wide",
            )
        )
    return uses


def analyze(root: Path, files: list[str]) -> list[Use]:
    """Every resolved import use and implicit method call in the project's Python files."""
    project = PythonProject(root, [f for f in files if f.endswith(".py")])
    methods = project.methods()
    uses: list[Use] = []
    for mod in project.modules.values():
        uses.extend(_import_uses(project, mod))
        uses.extend(_implicit_uses(mod, methods))
    return uses


def _signature_end(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The line (1-based) of the ``:`` that ends a def's signature."""
    inner = [*node.args.args, *node.args.posonlyargs, *node.args.kwonlyargs, node.returns]
    inner += [node.args.vararg, node.args.kwarg, *node.args.defaults, *node.args.kw_defaults]
    last = max([node.lineno, *(n.end_lineno or 0 for n in inner if n is not None)])
    for number in range(last, node.body[0].lineno + 1):
        code = lines[number - 1].split("#", 1)[0].rstrip()
        if code.endswith(":"):
            return number
    return node.body[0].lineno


def _defs_to_write(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods (classes searched, function bodies not)."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            found.extend(_defs_to_write(stmt.body))
    return found


def _body(mod: _Module, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Body | None:
    first = node.body[0]
    has_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if first.lineno <= node.lineno or (has_doc and len(node.body) == 1):
        return None  # a one-line def, or nothing but a docstring
    after = (first.end_lineno or first.lineno) if has_doc else _signature_end(mod.lines, node)
    last = node.body[-1]
    end_line = last.end_lineno or last.lineno
    line = first_code_line(mod.lines, after, end_line + 1)
    if line is None or not body_size_ok(line, end_line):
        return None
    text = mod.lines[line - 1]
    end_column = char_column(mod.lines[end_line - 1], last.end_col_offset or 0)
    return Body(mod.path, line, len(text) - len(text.lstrip()), end_line, end_column, node.name)


def function_bodies(root: Path, files: list[str]) -> list[Body]:
    """Every module-level function and method body of 2-30 lines, cursor after the
    signature and docstring."""
    project = PythonProject(root, [f for f in files if f.endswith(".py")])
    bodies = []
    for mod in project.modules.values():
        for node in _defs_to_write(mod.tree.body):
            body = _body(mod, node)
            if body is not None:
                bodies.append(body)
    return bodies
