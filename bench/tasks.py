"""Benchmark tasks built by static analysis, seeded and deterministic.

Four kinds per repository:

- ``import`` (CrossCodeEval style): the cursor sits right before the first use, in a file,
  of a name the file imports from another project file; ground truth = rest of the line.
- ``line`` (RepoEval style): a random line that calls a repository API; the cursor sits at
  the line's first non-blank character and the ground truth is the whole line.
- ``implicit``: ``recv.method(`` where the method is defined in one project class that the
  file never names and the method's name is absent from the left context.
- ``body`` (Python and Java): a function or method of 2-30 lines to write; the cursor sits
  on the first non-blank line after its signature and docstring (Javadoc above it), the
  ground truth is the whole body, and there is no gold definition.

The implicit-dependency subset (``--subset implicit``) widens the last pool to methods of up
to three project classes (any definition counts), none of them named above the cursor, and
narrows it to receivers that may be project objects (Java: not a variable declared with a
type from outside the project, not a class name). The default mix keeps its own pool.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.facts import Body, Target, Use, first_positions, read_text

KINDS: tuple[str, ...] = ("import", "line", "implicit")  # completions of one line
BODY = "body"
ALL_KINDS: tuple[str, ...] = (*KINDS, BODY)
# Share of a repository's task budget per kind (leftovers go to the other kinds).
KIND_SHARES: dict[str, float] = {"import": 0.5, "line": 0.25, "implicit": 0.25}
# Body tasks come on top of the one-line kinds (so those stay the same tasks): this share
# of the limit, or the whole limit when they are the only kind asked for.
BODY_SHARE = 0.25
DEFAULT_LIMITS: dict[str, int] = {"python": 40, "java": 150, "typescript": 60}
IMPLICIT_SUBSET_LIMIT = 100  # tasks per repository for ``--subset implicit`` by default


@dataclass(frozen=True)
class Task:
    id: str
    lang: str
    repo: str
    kind: str
    path: str
    line: int
    column: int
    ground_truth: str
    name: str
    member: str | None
    gold: Target
    member_gold: Target
    implicit: bool

    def to_dict(self) -> dict:
        return asdict(self)


def left_context(root: Path, task: Task) -> str:
    """Everything in the task's file before the cursor."""
    lines = read_text(root / task.path).split("\n")
    return "\n".join([*lines[: task.line - 1], lines[task.line - 1][: task.column]])


def _analyzer(lang: str) -> Callable[[Path, list[str]], list[Use]]:
    if lang == "python":
        from bench.analyze_python import analyze
    elif lang == "java":
        from bench.analyze_java import analyze
    elif lang == "typescript":
        from bench.analyze_typescript import analyze
    else:
        raise ValueError(f"no task builder for {lang!r}")
    return analyze


def _body_finder(lang: str) -> Callable[[Path, list[str]], list[Body]] | None:
    if lang == "python":
        from bench.analyze_python import function_bodies
    elif lang == "java":
        from bench.analyze_java import function_bodies
    else:
        return None
    return function_bodies


def tracked_files(root: Path) -> list[str]:
    """Files of the repository (``git ls-files`` when it is one, else every file)."""
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False)
    if proc.returncode == 0:
        return sorted(p for p in proc.stdout.decode().split("\0") if p)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _task(use: Use, kind: str, repo: str, lang: str, lines: list[str]) -> Task | None:
    text = lines[use.line - 1]
    column = use.column
    if kind == "line":
        column = len(text) - len(text.lstrip())
    ground_truth = text[column:].rstrip()
    if len(ground_truth) < 3 or not use.gold:
        return None
    first = first_positions("\n".join(lines))
    name = use.name
    implicit = first.get(name, (0, 0)) >= (use.line, column)
    return Task(
        f"{repo}:{use.path}:{use.line}:{column}:{kind}",
        lang,
        repo,
        kind,
        use.path,
        use.line,
        column,
        ground_truth,
        name,
        use.member,
        use.gold,
        use.member_gold,
        implicit,
    )


def _body_task(body: Body, repo: str, lang: str, lines: list[str]) -> Task:
    if body.line == body.end_line:
        ground_truth = lines[body.line - 1][body.column : body.end_column]
    else:
        middle = lines[body.line : body.end_line - 1]
        last = lines[body.end_line - 1][: body.end_column]
        ground_truth = "\n".join([lines[body.line - 1][body.column :], *middle, last])
    return Task(
        f"{repo}:{body.path}:{body.line}:{body.column}:{BODY}",
        lang,
        repo,
        BODY,
        body.path,
        body.line,
        body.column,
        ground_truth,
        body.name,
        None,
        (),
        (),
        False,
    )


def _candidates(uses: list[Use], kind: str, wide_implicit: bool) -> list[Use]:
    if kind == "import":
        return [u for u in uses if u.kind == "import" and u.first]
    if kind == "implicit":
        extra = "implicit-wide" if wide_implicit else "implicit-loose"
        return [u for u in uses if u.kind in ("implicit", extra)]
    by_line: dict[tuple[str, int], Use] = {}
    for use in uses:
        if use.kind == "import" and use.is_call:
            by_line.setdefault((use.path, use.line), use)
    return list(by_line.values())


def build_tasks(
    root: Path,
    repo: str,
    lang: str,
    limit: int | None = None,
    seed: int = 0,
    kinds: tuple[str, ...] = ALL_KINDS,
    wide_implicit: bool = False,
) -> list[Task]:
    """Sample up to ``limit`` one-line tasks of ``repo`` (split over ``kinds``) and, with
    ``body`` among the kinds, ``BODY_SHARE`` of ``limit`` body tasks, deterministically.

    ``wide_implicit`` draws ``implicit`` tasks from the wider pool (the implicit subset).
    """
    limit = DEFAULT_LIMITS.get(lang, 40) if limit is None else limit
    line_kinds = tuple(k for k in kinds if k != BODY)
    files = tracked_files(root)
    rng = random.Random(f"{seed}:{repo}")
    sources: dict[str, list[str]] = {}
    tasks: list[Task] = []
    seen: set[tuple[str, int]] = set()

    def lines_of(path: str) -> list[str]:
        if path not in sources:
            sources[path] = read_text(root / path).split("\n")
        return sources[path]

    if line_kinds:
        uses = sorted(
            _analyzer(lang)(root, files), key=lambda u: (u.path, u.line, u.column, u.kind)
        )
        pools = {kind: _candidates(uses, kind, wide_implicit) for kind in line_kinds}
        for pool in pools.values():
            rng.shuffle(pool)
        for kind, quota in _quotas(pools, line_kinds, limit).items():
            taken = 0
            for use in pools[kind]:
                if taken >= quota:
                    break
                if (use.path, use.line) in seen:
                    continue
                task = _task(use, kind, repo, lang, lines_of(use.path))
                if task is not None:
                    tasks.append(task)
                    seen.add((use.path, use.line))
                    taken += 1
    finder = _body_finder(lang) if BODY in kinds else None
    if finder is not None:
        bodies = sorted(finder(root, files), key=lambda b: (b.path, b.line))
        rng.shuffle(bodies)
        quota = int(limit * BODY_SHARE) if line_kinds else limit
        for body in bodies:
            if quota <= 0:
                break
            if (body.path, body.line) not in seen:
                tasks.append(_body_task(body, repo, lang, lines_of(body.path)))
                seen.add((body.path, body.line))
                quota -= 1
    return tasks


def _quotas(pools: dict[str, list[Use]], kinds: tuple[str, ...], limit: int) -> dict[str, int]:
    """Tasks per kind: ``KIND_SHARES`` of ``limit``, unused quota handed to kinds with spare
    candidates."""
    total_share = sum(KIND_SHARES[k] for k in kinds)
    quotas = {kind: int(limit * KIND_SHARES[kind] / total_share) for kind in kinds}
    for kind in kinds[: limit - sum(quotas.values())]:
        quotas[kind] += 1
    shortfall = sum(max(0, quotas[k] - len(pools[k])) for k in kinds)
    for kind in kinds:
        spare = max(0, len(pools[kind]) - quotas[kind])
        extra = min(spare, shortfall)
        quotas[kind] += extra
        shortfall -= extra
    return quotas


# Named task subsets: ``--subset NAME`` keeps the tasks its predicate accepts.
SUBSETS: dict[str, Callable[[Task], bool]] = {
    "all": lambda task: True,
    "implicit": lambda task: task.implicit,
    **{kind: (lambda task, kind=kind: task.kind == kind) for kind in ALL_KINDS},
}


def subset_tasks(
    root: Path, repo: str, lang: str, subset: str = "all", limit: int | None = None, seed: int = 0
) -> list[Task]:
    """The tasks of ``repo`` in a named subset; ``implicit`` builds the wide implicit pool
    (``IMPLICIT_SUBSET_LIMIT`` per repository unless ``limit`` says otherwise)."""
    if subset == "implicit":
        limit = IMPLICIT_SUBSET_LIMIT if limit is None else limit
        tasks = build_tasks(root, repo, lang, limit, seed, ("implicit",), wide_implicit=True)
    else:
        chosen = (subset,) if subset in ALL_KINDS else ALL_KINDS
        tasks = build_tasks(root, repo, lang, limit, seed, chosen)
    return filter_tasks(tasks, subset)


def filter_tasks(tasks: Iterable[Task], predicate: Callable[[Task], bool] | str) -> list[Task]:
    """Tasks accepted by ``predicate`` (a callable or a name from ``SUBSETS``)."""
    accept = SUBSETS[predicate] if isinstance(predicate, str) else predicate
    return [t for t in tasks if accept(t)]
