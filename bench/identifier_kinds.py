"""What kind of name each missing identifier is, and how often each system shows it.

Identifier recall counts every identifier of the ground-truth line that the left context
never mentions. Some of them no retriever can know: a name the line itself introduces
(``x = ``, ``as x``, ``for x``) or a word inside one of its strings. This prints, per
task kind and category, how many missing identifiers there are and how many each
system's context holds, so a gap in the per-kind means can be read against what is
findable at all.

    python -m bench.identifier_kinds --lang python --kind line --kind import --limit 40
"""

from __future__ import annotations

import argparse
import builtins
import re
from collections import Counter

from bench.corpora import corpora_for, fetch
from bench.metrics import missing_identifiers
from bench.systems import make_systems
from bench.tasks import left_context, subset_tasks

__all__ = ["CATEGORIES", "category", "main"]

CATEGORIES = (
    "callee, attribute, class",
    "keyword argument",
    "name the line introduces",
    "word in a string or comment",
    "builtin",
)
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
_COMMENT = re.compile(r"#.*|//.*")
_TARGETS = re.compile(r"^\s*([\w, .]+?)\s*(?::[^=]+)?=(?!=)")
_BOUND = re.compile(r"\b(?:as|for)\s+(\w+)")
_KEYWORD_ARGUMENT = re.compile(r"[(,]\s*(\w+)\s*=(?!=)")
_BUILTIN_METHODS = {"append", "endswith", "format", "get", "items", "join", "keys", "split"}
_BUILTIN_METHODS |= {"startswith", "strip", "rstrip", "lstrip", "values"}


def category(name: str, ground_truth: str) -> str:
    """The category (one of ``CATEGORIES``) of missing identifier ``name`` of the line."""
    code = _COMMENT.sub("", _STRING.sub('""', ground_truth))
    targets = _TARGETS.match(code)
    introduced = set(_BOUND.findall(code))
    if targets:
        introduced |= {t.split(".")[-1] for t in targets.group(1).replace(" ", "").split(",")}
    if name in introduced:
        return CATEGORIES[2]
    if name in _KEYWORD_ARGUMENT.findall(code):
        return CATEGORIES[1]
    if not re.search(rf"\b{re.escape(name)}\b", code):
        return CATEGORIES[3]
    if hasattr(builtins, name) or name in _BUILTIN_METHODS:
        return CATEGORIES[4]
    return CATEGORIES[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", action="append", default=None, help="python, java, ...")
    parser.add_argument("--kind", action="append", default=None, help="task kind (repeat)")
    parser.add_argument("--limit", type=int, default=40, help="tasks per repository")
    parser.add_argument(
        "--systems", default="greprag,cceval-bm25,repocoder-jaccard", help="comma-separated"
    )
    args = parser.parse_args(argv)
    langs = args.lang or ["python"]
    kinds = set(args.kind or ["line", "import"])
    systems = make_systems(args.systems.split(","))
    total: Counter[tuple[str, str]] = Counter()
    shown: Counter[tuple[str, str, str]] = Counter()
    for corpus in corpora_for(langs):
        root = fetch(corpus)
        for system in systems:
            system.setup(root, corpus.lang)
        for task in subset_tasks(root, corpus.name, corpus.lang, "all", args.limit, 0):
            if task.kind not in kinds:
                continue
            left = left_context(root, task)
            missing = missing_identifiers(task.ground_truth, left, corpus.lang)
            if not missing:
                continue
            contexts = [s.retrieve(root, task, left).context for s in systems]
            for name in missing:
                key = (task.kind, category(name, task.ground_truth))
                total[key] += 1
                for system, context in zip(systems, contexts, strict=True):
                    if re.search(rf"\b{re.escape(name)}\b", context):
                        shown[(*key, system.name)] += 1
    names = [s.name for s in systems]
    print(f"| {'/'.join(langs)} kind: category | identifiers | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for kind in sorted(kinds):
        for cat in CATEGORIES:
            if total[(kind, cat)]:
                counts = " | ".join(str(shown[(kind, cat, n)]) for n in names)
                print(f"| {kind}: {cat} | {total[(kind, cat)]} | {counts} |")


if __name__ == "__main__":
    main()
