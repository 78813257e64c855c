"""Trace imports of in-repo modules to the files that define them."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path

from greprag.context import ImportRef, LocalContext

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


def _js_candidates(ref: ImportRef, current: str | None) -> list[str]:
    if not ref.module.startswith("."):
        return []
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(current or ""), ref.module))
    suffixes = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", "/index.ts", "/index.js")
    return [stem + s for s in suffixes]


def resolve_imports(
    ctx: LocalContext, repo: Path, known_files: Set[str] | None = None
) -> dict[str, str]:
    """Map each imported local name to the repo file that defines it, where one exists.

    Only files inside the repo count (``..`` never escapes it); modules from outside
    the repo (the standard library, dependencies) map to nothing.
    """
    found: dict[str, str] = {}
    for ref in ctx.imports:
        if ctx.lang == "python":
            candidates = _python_candidates(ref, ctx.path)
        elif ctx.lang == "java":
            candidates = _java_candidates(ref)
        elif ctx.lang in ("javascript", "typescript"):
            candidates = _js_candidates(ref, ctx.path)
        else:
            candidates = []
        for candidate in candidates:
            normalized = posixpath.normpath(candidate)
            if normalized.startswith(("..", "/")):
                continue
            exists = (
                normalized in known_files
                if known_files is not None
                else os.path.isfile(os.path.join(repo, normalized))
            )
            if exists:
                found[ref.local_name] = normalized
                break
        else:
            if ctx.lang == "java" and ref.name:
                suffix = f"/{ref.module.replace('.', '/')}/{ref.name}.java"
                match = _suffix_match(suffix, known_files)
                if match:
                    found[ref.local_name] = match
    return found


def _suffix_match(suffix: str, known_files: Set[str] | None) -> str | None:
    if not known_files:
        return None
    for path in known_files:
        if ("/" + path).endswith(suffix):
            return path
    return None


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
