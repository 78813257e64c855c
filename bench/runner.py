"""One benchmark run: fetch corpora, build tasks, run every system, score and report."""

from __future__ import annotations

import platform
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import report
from bench.corpora import cache_dir, corpora_for, fetch
from bench.metrics import (
    TaskResult,
    block_precision,
    edit_similarity,
    exact_match,
    identifier_f1,
    identifier_recall,
    missing_identifiers,
    summarize,
    target_hit,
)
from bench.systems import DEFAULT_SYSTEMS, Retrieval, System, make_systems
from bench.tasks import Task, left_context, subset_tasks
from greprag.tokens import count_tokens


@dataclass
class RunConfig:
    langs: list[str]
    limit: int | None = None
    out: Path | None = None
    systems: list[str] = field(default_factory=lambda: list(DEFAULT_SYSTEMS))
    subset: str = "all"
    model: str | None = None
    seed: int = 0
    repos: list[str] = field(default_factory=list)


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _score(task: Task, system: str, left: str, got: Retrieval) -> TaskResult:
    missing = missing_identifiers(task.ground_truth, left, task.lang)
    return TaskResult(
        task_id=task.id,
        system=system,
        lang=task.lang,
        repo=task.repo,
        kind=task.kind,
        gold_hit=target_hit(got.blocks, task.gold) if task.gold else None,
        member_hit=target_hit(got.blocks, task.member_gold) if task.member_gold else None,
        ident_recall=identifier_recall(missing, got.context),
        tokens=count_tokens(got.context),
        latency_ms=got.latency_ms,
        precision=block_precision(got.blocks, missing),
        blocks=len(got.blocks),
    )


def _generate(result: TaskResult, model: str, task: Task, left: str, got: Retrieval) -> None:
    from bench.generation import complete

    prediction = complete(model, got.context, left, task.path)
    result.exact_match = exact_match(prediction, task.ground_truth)
    result.edit_similarity = edit_similarity(prediction, task.ground_truth)
    result.identifier_f1 = identifier_f1(prediction, task.ground_truth)


def _run_system(
    system: System, root: Path, tasks: list[Task], lefts: dict[str, str], model: str | None
) -> list[TaskResult]:
    results = []
    errors = 0
    for task in tasks:
        left = lefts[task.id]
        error = None
        try:
            got = system.retrieve(root, task, left)
        except Exception as exc:  # one failing task must not sink the run; it scores as empty
            error = f"{type(exc).__name__}: {exc}"
            errors += 1
            if errors <= 3:
                _log(f"  {system.name} failed on {task.id}: {error}")
            got = Retrieval([], "", 0.0)
        result = _score(task, system.name, left, got)
        result.error = error
        if model:
            _generate(result, model, task, left, got)
        results.append(result)
    if errors:
        _log(f"  {system.name}: {errors} task(s) failed")
    return results


def _usable_model(model: str | None) -> str | None:
    if not model:
        return None
    from bench.generation import probe

    reason = probe(model)
    if reason:
        _log(f"skipping generation metrics: model {model!r} is not reachable ({reason})")
        return None
    return model


def run(config: RunConfig) -> dict[str, Any]:
    """Run the benchmark; writes results.md/.json/.png into the output dir and returns them."""
    started = time.perf_counter()
    systems = make_systems(config.systems)
    model = _usable_model(config.model)
    results: list[TaskResult] = []
    all_tasks: list[Task] = []
    setup_s: dict[tuple[str, str], float] = defaultdict(float)
    for corpus in corpora_for(config.langs, config.repos):
        root = fetch(corpus)
        tasks = subset_tasks(
            root, corpus.name, corpus.lang, config.subset, config.limit, config.seed
        )
        _log(f"{corpus.name}: {len(tasks)} tasks")
        lefts = {t.id: left_context(root, t) for t in tasks}
        all_tasks.extend(tasks)
        for system in systems:
            tick = time.perf_counter()
            setup_s[(corpus.lang, system.name)] += system.setup(root, corpus.lang)
            results.extend(_run_system(system, root, tasks, lefts, model))
            _log(f"  {system.name}: {time.perf_counter() - tick:.1f} s")
    rows = summarize(results, setup_s)
    table = report.markdown(rows, with_generation=model is not None)
    out = config.out or cache_dir() / "runs" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "config": {**asdict(config), "out": str(out)},
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": _cpus(),
        },
        "generation": model is not None,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "summary": rows,
        "tasks": [t.to_dict() for t in all_tasks],
        "results": [r.to_dict() for r in results],
    }
    (out / "results.md").write_text(table + "\n")
    report.write_json(out / "results.json", payload)
    report.chart(rows, out / "recall.png")
    _log(f"wrote {out}/results.md, results.json, recall.png in {payload['elapsed_s']} s")
    return payload


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
