"""Trace imports of in-repo modules to the files that define them."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from greprag.context import ImportRef, LocalContext, go_package, js_statement

_SOURCE_ROOTS = ("", "src/", "lib/", "src/main/java/", "source/")


def _python_candidates(ref: ImportRef, current: str | None) -> list[str]:
    module = ref.module
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base = posixpath.dirname(current or "")
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        rest = module.lstrip(".").replace(".", "/")
        stem = posixpath.join(base, rest) if rest else base
        stems = [stem]
        if ref.name:
            stems.insert(0, posixpath.join(stem, ref.name))
        return [p for s in stems for p in (f"{s}.py", f"{s}/__init__.py") if s]
    stem = module.replace(".", "/")
    stems = [stem]
    if ref.name:
        stems.insert(0, f"{stem}/{ref.name}")
    return [
        f"{root}{s}{suffix}"
        for s in stems
        for root in _SOURCE_ROOTS
        for suffix in (".py", "/__init__.py")
    ]


def _java_candidates(ref: ImportRef) -> list[str]:
    stem = ref.module.replace(".", "/")
    name = f"{stem}/{ref.name}" if ref.name else stem
    return [f"{root}{name}.java" for root in _SOURCE_ROOTS]


_JS_SUFFIXES = (
    *(".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs"),
    *("/index.ts", "/index.tsx", "/index.d.ts", "/index.js"),
)
_JS_EMITTED = (".js", ".jsx", ".mjs", ".cjs")  # what TypeScript's ES module imports name


def _js_candidates(ref: ImportRef, current: str | None) -> list[str]:
    """The files a relative import may mean: the path as written, with each extension or
    as a folder's index; ``./util.js`` in TypeScript names the file emitted from
    ``util.ts``, so the path less that extension is tried too."""
    if not ref.module.startswith("."):
        return []
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(current or ""), ref.module))
    root, extension = posixpath.splitext(stem)
    emitted = extension in _JS_EMITTED
    sources = [root + s for s in (".ts", ".tsx", ".d.ts", ".mts", ".cts")] if emitted else []
    return [stem, *sources, *(stem + s for s in _JS_SUFFIXES)]


_RUST_ROOTS = ("lib", "main")  # a crate's root module files, in its ``src`` folder


def _rust_candidates(ref: ImportRef, current: str | None) -> list[str]:
    """The files a ``use crate::…``, ``self::…`` or ``super::…`` path may name: the last
    name as a module of its own first, then the module holding it (``a/b.rs`` or
    ``a/b/mod.rs``; a crate root is ``lib.rs`` or ``main.rs``). Any other path is
    another crate's (the standard library, a dependency)."""
    parts = [p for p in ref.module.split("::") if p]
    if not parts or parts[0] not in ("crate", "self", "super") or current is None:
        return []
    folder, stem = posixpath.split(current)
    stem = stem.rsplit(".", 1)[0]
    at = ("/" + folder + "/").rfind("/src/")
    root = folder[: at + 3] if at >= 0 else ""  # the crate's ``src`` folder
    own = folder if stem in ("mod", *_RUST_ROOTS) else posixpath.join(folder, stem)
    head, rest = parts[0], parts[1:]
    if head == "crate":
        base = root
    elif head == "self":
        base = own
    else:
        base = posixpath.dirname(own)
        while rest and rest[0] == "super":
            base, rest = posixpath.dirname(base), rest[1:]
    module = posixpath.join(base, *rest)
    found = []
    if ref.name and ref.name not in ("self", "*"):
        found += [
            posixpath.join(module, f"{ref.name}.rs"),
            posixpath.join(module, ref.name, "mod.rs"),
        ]
    if rest:
        found += [f"{module}.rs", posixpath.join(module, "mod.rs")]
    elif head == "self":
        found.append(current)
    elif base == root:
        found += [posixpath.join(root, f"{name}.rs") for name in _RUST_ROOTS]
    else:
        found += [f"{base}.rs", posixpath.join(base, "mod.rs")]
    return found


def go_module(repo: Path) -> str | None:
    """The module path the repository's ``go.mod`` declares, or None."""
    try:
        text = (repo / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = _GO_MODULE.search(text)
    return found.group(1).strip('"') if found else None


_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)


def _go_candidates(ref: ImportRef, repo: Path, module: str | None) -> list[str]:
    """The source files of an import of the repository's own module (a package is a
    folder): the one named after the package first, then the others not of tests, in
    name order; none for another module's."""
    if module is None or not (ref.module == module or ref.module.startswith(module + "/")):
        return []
    folder = posixpath.normpath(ref.module[len(module) :].lstrip("/") or ".")
    if folder.startswith(("..", "/")):
        return []
    try:
        names = sorted(n for n in os.listdir(repo / folder) if n.endswith(".go"))
    except OSError:
        return []
    own = go_package(ref.module) + ".go"  # the file named after the package, if any
    ordered = sorted(names, key=lambda n: (n.endswith("_test.go"), n != own))
    return [posixpath.join(folder, n) for n in ordered]


def resolve_imports(
    ctx: LocalContext,
    repo: Path,
    known_files: Set[str] | None = None,
    lines_of: Callable[[str], Sequence[str] | None] | None = None,
) -> dict[str, str]:
    """Map each imported local name to the repo file that defines it, where one exists.

    Only files inside the repo count (``..`` never escapes it); modules from outside
    the repo (the standard library, dependencies) map to nothing. With ``lines_of`` (a
    file's lines), a JavaScript or TypeScript name imported from a module that only
    re-exports it (``export * from "./util"``, an ``index.ts``) maps to the file that
    declares it.
    """
    found: dict[str, str] = {}
    module = go_module(repo) if ctx.lang == "go" and ctx.imports else None
    # a module that many names come from is looked up, and its barrel read, once
    first_found: dict[tuple[str, ...], str | None] = {}
    offered: dict[str, dict[str, str]] = {}
    for ref in ctx.imports:
        if ctx.lang == "python":
            candidates = _python_candidates(ref, ctx.path)
        elif ctx.lang == "java":
            candidates = _java_candidates(ref)
        elif ctx.lang in ("javascript", "typescript"):
            candidates = _js_candidates(ref, ctx.path)
        elif ctx.lang == "rust":
            candidates = _rust_candidates(ref, ctx.path)
        elif ctx.lang == "go":
            candidates = _go_candidates(ref, repo, module)
        else:
            candidates = []
        key = tuple(candidates)
        if key not in first_found:
            first_found[key] = _first_existing(candidates, repo, known_files)
        path = first_found[key]
        if path is not None:
            if lines_of is not None and ref.name and ctx.lang in ("javascript", "typescript"):
                if path not in offered:
                    offered[path] = js_declared_in(path, lines_of)
                path = offered[path].get(ref.name, path)
            found[ref.local_name] = path
            if ref.alias and ref.name and ref.alias != ref.name:
                found.setdefault(ref.name, path)  # its definition bears the original name
        elif ctx.lang == "java" and ref.name:
            suffix = f"/{ref.module.replace('.', '/')}/{ref.name}.java"
            match = _suffix_match(suffix, known_files)
            if match:
                found[ref.local_name] = match
    return found


def _first_existing(
    candidates: Sequence[str], repo: Path, known_files: Set[str] | None
) -> str | None:
    """The first of ``candidates`` inside the repository that is a file (listed in
    ``known_files``, else on disk)."""
    for path in _in_repo(candidates):
        if path in known_files if known_files is not None else os.path.isfile(repo / path):
            return path
    return None


def _in_repo(candidates: Iterable[str]) -> Iterator[str]:
    """``candidates`` normalized, less those that would leave the repository."""
    for candidate in candidates:
        normalized = posixpath.normpath(candidate)
        if not normalized.startswith(("..", "/")):
            yield normalized


# a top-level declaration, exported or not (``export default class X``, ``declare const``)
_JS_DECLARED = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:class|interface|type|(?:const\s+)?enum|function\*?|const|let|var|namespace)"
    r"\s+([A-Za-z_$][\w$]*)"
)
_JS_REEXPORT = re.compile(r"^export\s+(?:type\s+)?(\*|\{[^}]*\})\s*from\s+['\"](\.[^'\"]*)['\"]")
_JS_REEXPORT_HOPS = 3  # barrels re-exporting barrels: ``index.ts`` → ``core/index.ts`` → …
_DECLARED: dict[str, tuple[tuple[tuple[str, Sequence[str] | None], ...], dict[str, str]]] = {}
_DECLARED_MAX = 512


def js_declared_in(path: str, lines_of: Callable[[str], Sequence[str] | None]) -> dict[str, str]:
    """The names a JavaScript/TypeScript module offers, each with the file declaring it:
    its own top-level declarations, then what it re-exports (``export * from``, ``export
    { a, b as c } from``), followed ``_JS_REEXPORT_HOPS`` files deep. Kept per module
    while every file read for it is unchanged (``lines_of`` gives the same lines
    object)."""
    held = _DECLARED.get(path)
    if held is not None and all(lines_of(p) is lines for p, lines in held[0]):
        return held[1]
    read: list[tuple[str, Sequence[str] | None]] = []
    declared = _declared(path, lines_of, _JS_REEXPORT_HOPS, read)
    if len(_DECLARED) >= _DECLARED_MAX:
        _DECLARED.clear()
    _DECLARED[path] = (tuple(read), declared)
    return declared


def _declared(
    path: str,
    lines_of: Callable[[str], Sequence[str] | None],
    hops: int,
    read: list[tuple[str, Sequence[str] | None]],
) -> dict[str, str]:
    """``js_declared_in`` computed, ``hops`` re-exports deep; each file read goes into
    ``read``."""
    lines = lines_of(path)
    if lines is None:
        return {}
    read.append((path, lines))
    declared = {m.group(1): path for line in lines if (m := _JS_DECLARED.match(line))}
    for number, line in enumerate(lines, 1):
        if hops <= 0 or not line.startswith("export"):
            continue
        if (m := _JS_REEXPORT.match(js_statement(lines, number))) is None:
            continue
        target = _js_module_file(path, m.group(2), lines_of, read)
        if target is None or any(target == p for p, _ in read):
            continue
        offered = _declared(target, lines_of, hops - 1, read)
        if m.group(1) == "*":
            for name, where in offered.items():
                declared.setdefault(name, where)
            continue
        for item in m.group(1).strip("{} ").split(","):
            words = item.split()
            if words and words[0] == "type":
                words = words[1:]
            if words and words[0] in offered:
                declared.setdefault(words[-1] if len(words) == 3 else words[0], offered[words[0]])
    return declared


def _js_module_file(
    importer: str,
    spec: str,
    lines_of: Callable[[str], Sequence[str] | None],
    read: list[tuple[str, Sequence[str] | None]],
) -> str | None:
    """The file a relative module specifier of ``importer`` names, as imports resolve;
    each path tried and missing goes into ``read`` (as read: nothing), so that a file
    created there later is seen."""
    for path in _in_repo(_js_candidates(ImportRef(spec), importer)):
        if lines_of(path) is not None:
            return path
        read.append((path, None))
    return None


def _suffix_match(suffix: str, known_files: Set[str] | None) -> str | None:
    """The first listed path (in sorted order) that ends with ``suffix``, a
    ``/package/path/Name.java``; found among the files of that name."""
    if not known_files:
        return None
    named = _by_file_name(frozenset(known_files)).get(suffix.rsplit("/", 1)[-1], ())
    return next((path for path in named if ("/" + path).endswith(suffix)), None)


@lru_cache(maxsize=4)
def _by_file_name(known_files: frozenset[str]) -> dict[str, list[str]]:
    """The listed paths by file name, each name's sorted: a Java import is matched among
    the few files of its class's name, not every file of the repository (once per
    listing: the grep route hands out the same frozenset until it lists again)."""
    index: dict[str, list[str]] = {}
    for path in sorted(known_files):
        index.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    return index


_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
# where a package declaration is looked for: past a license header, and a file without
# one (the default package) is not read to its end
_PACKAGE_CHARS = 20_000


@dataclass(frozen=True)
class PackageScope:
    """The Java packages whose classes the cursor's file names without importing each:
    its own, and those it imports whole (``import a.b.*;``), unless a single-type import
    of the same simple name shadows them."""

    folders: tuple[str, ...]  # ``com/x/y``
    shadowed: frozenset[str]  # simple names the file imports one by one

    @classmethod
    def of(cls, ctx: LocalContext) -> PackageScope | None:
        if ctx.lang != "java":
            return None
        match = _JAVA_PACKAGE.search(ctx.before, 0, _PACKAGE_CHARS)
        own = [match.group(1)] if match else []
        packages = [*own, *(ref.module for ref in ctx.imports if ref.name is None)]
        if not packages:
            return None
        names = frozenset(ref.local_name for ref in ctx.imports if ref.name)
        return cls(tuple(p.replace(".", "/") for p in dict.fromkeys(packages)), names)

    def defines(self, path: str, names: list[str]) -> bool:
        """Whether ``path`` is the file of one of the classes ``names`` of these packages
        (under any source root)."""
        if not path.endswith(".java"):
            return False
        folder, _, file = path.rpartition("/")
        name = file[: -len(".java")]
        return (
            name in names
            and name not in self.shadowed
            and any(folder == f or folder.endswith("/" + f) for f in self.folders)
        )
