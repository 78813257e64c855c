"""Run outputs: a Markdown table, a JSON file and a PNG chart."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

_COLUMNS = (
    ("system", "system", "{}"),
    ("tasks", "tasks", "{}"),
    ("errors", "errors", "{}"),
    ("gold_recall", "gold recall", "{:.3f}"),
    ("member_recall", "member recall", "{:.3f}"),
    ("ident_recall", "identifier recall", "{:.3f}"),
    ("precision", "precision", "{:.3f}"),
    ("mean_blocks", "blocks", "{:.1f}"),
    ("mean_tokens", "mean tokens", "{:.0f}"),
    ("p50_ms", "p50 ms", "{:.1f}"),
    ("p95_ms", "p95 ms", "{:.1f}"),
    ("setup_s", "set-up s", "{:.2f}"),
)
_GENERATION = (
    ("exact_match", "EM", "{:.3f}"),
    ("edit_similarity", "ES", "{:.3f}"),
    ("identifier_f1", "ident F1", "{:.3f}"),
)


def _cell(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return fmt.format(value)


def _table(rows: list[dict[str, Any]], columns: tuple) -> list[str]:
    lines = [
        "| " + " | ".join(title for _, title, _ in columns) + " |",
        "|" + "|".join(" --- " for _ in columns) + "|",
    ]
    lines += [
        "| " + " | ".join(_cell(row.get(key), fmt) for key, _, fmt in columns) + " |"
        for row in rows
    ]
    return lines


# Per task kind: (row key, column title, format).
_BY_KIND = (
    ("gold_recall_by_kind", "gold recall", "{:.3f}"),
    ("ident_recall_by_kind", "identifier recall", "{:.3f}"),
    ("precision_by_kind", "precision", "{:.3f}"),
    ("tokens_by_kind", "tokens", "{:.0f}"),
)


def markdown(rows: list[dict[str, Any]], with_generation: bool = False) -> str:
    """One table per language, then per task kind: gold recall, identifier recall,
    precision and tokens, each system side by side."""
    columns = _COLUMNS + (_GENERATION if with_generation else ())
    out: list[str] = []
    for lang in dict.fromkeys(r["lang"] for r in rows):
        lang_rows = [r for r in rows if r["lang"] == lang]
        out += [f"### {lang}", "", *_table(lang_rows, columns), ""]
        for key, title, fmt in _BY_KIND:
            kinds = sorted({k for r in lang_rows for k in r.get(key, {})})
            kind_rows = [{"system": r["system"], **r.get(key, {})} for r in lang_rows]
            kind_columns = (
                ("system", "system", "{}"),
                *((k, f"{title}: {k}", fmt) for k in kinds),
            )
            out += [*_table(kind_rows, kind_columns), ""]
    return "\n".join(out)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def chart(rows: list[dict[str, Any]], path: Path) -> None:
    """Grouped bars: gold-definition recall per system, one group per language."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = list(dict.fromkeys(r["lang"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    width = 0.8 / max(len(systems), 1)
    fig, (recall_ax, latency_ax) = plt.subplots(1, 2, figsize=(13, 4.5))
    for index, system in enumerate(systems):
        by_lang = {r["lang"]: r for r in rows if r["system"] == system}
        xs = [i + index * width for i in range(len(langs))]
        recall_ax.bar(
            xs,
            [by_lang.get(lang, {}).get("gold_recall") or 0 for lang in langs],
            width,
            label=system,
        )
        latency_ax.bar(xs, [by_lang.get(lang, {}).get("p50_ms") or 0 for lang in langs], width)
    for ax, title in ((recall_ax, "gold-definition recall"), (latency_ax, "p50 latency (ms)")):
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(langs))], langs)
        ax.set_title(title)
    recall_ax.set_ylim(0, 1)
    recall_ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
