"""``python -m bench``: fetch corpora, list tasks, or run the benchmark and print the table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.corpora import CORPORA, corpora_for, fetch
from bench.systems import DEFAULT_SYSTEMS, SYSTEMS
from bench.tasks import IMPLICIT_SUBSET_LIMIT, SUBSETS, subset_tasks

LANGS = ("python", "java", "typescript")


EXTRA_NAMES = [c.name for c in CORPORA if c.extra]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("run", "run the benchmark and print the table"),
        ("fetch", "download and unpack the corpora"),
        ("tasks", "build the tasks and print them as JSON lines"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument(
            "--lang",
            action="append",
            choices=LANGS,
            help="language (repeatable; default python and java)",
        )
        sub.add_argument(
            "--repo",
            action="append",
            default=[],
            help="only this corpus (repeatable), e.g. rich, jdk17; the extra corpora, "
            f"with test suites, run only when named: {', '.join(EXTRA_NAMES)}",
        )
        if name == "fetch":
            continue
        sub.add_argument(
            "--limit",
            type=int,
            help="tasks per repository (default 40 Python, "
            f"150 Java, 60 TypeScript; {IMPLICIT_SUBSET_LIMIT} with --subset "
            "implicit)",
        )
        sub.add_argument("--seed", type=int, default=0)
        sub.add_argument(
            "--subset",
            choices=sorted(SUBSETS),
            default="all",
            help="keep only these tasks (implicit: the implicit-dependency "
            "subset, gold name and class absent from the left context)",
        )
        if name == "run":
            sub.add_argument(
                "--systems",
                default=",".join(DEFAULT_SYSTEMS),
                help=f"comma-separated, from: {', '.join(SYSTEMS)}",
            )
            sub.add_argument(
                "--out", type=Path, help="output dir (default: a new run folder in the cache)"
            )
            sub.add_argument(
                "--model",
                help="litellm model for completion metrics (skipped, saying so, when unreachable)",
            )
    docs = commands.add_parser("docs", help="docs mode on real manuals (greprag search)")
    docs.add_argument("--corpus", action="append", default=[], help="only this corpus")
    docs.add_argument("--limit", type=int, default=60, help="questions per kind and corpus")
    docs.add_argument("--seed", type=int, default=0)
    docs.add_argument("--systems", default="grep,dense,fused,bm25-windows")
    docs.add_argument("--ablations", action="store_true", help="question-understanding parts")
    docs.add_argument("--out", type=Path, help="output dir (default: a run folder in the cache)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _command(args)
    except (RuntimeError, OSError) as exc:  # a download or unpack that failed: one line
        print(f"bench: {exc}", file=sys.stderr)
        return 1


def _command(args: argparse.Namespace) -> int:
    if args.command == "docs":
        from bench.docs_eval import main as docs_main

        return docs_main(args)
    langs = args.lang or ["python", "java"]
    corpora = corpora_for(langs, args.repo)
    if not corpora:
        print("no corpus matches", file=sys.stderr)
        return 2
    if args.command == "fetch":
        for corpus in corpora:
            print(f"{corpus.name}\t{fetch(corpus)}")
        return 0
    if args.command == "tasks":
        for corpus in corpora:
            tasks = subset_tasks(
                fetch(corpus), corpus.name, corpus.lang, args.subset, args.limit, args.seed
            )
            for task in tasks:
                print(json.dumps(task.to_dict()))
        return 0
    from bench.runner import RunConfig, run

    config = RunConfig(
        langs=langs,
        limit=args.limit,
        out=args.out,
        systems=[s.strip() for s in args.systems.split(",") if s.strip()],
        subset=args.subset,
        model=args.model,
        seed=args.seed,
        repos=args.repo,
    )
    payload = run(config)
    from bench.report import markdown

    print(markdown(payload["summary"], with_generation=payload["generation"]))
    return 0
