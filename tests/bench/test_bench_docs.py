"""The docs benchmark's own readers, questions and baseline, on a tiny manual."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.docs_eval import Record, WindowsBM25, markdown, summarize
from bench.docs_tasks import (
    Question,
    answered_by,
    code_questions,
    html_questions,
    markdown_questions,
    questions_for,
    rst_questions,
    words_questions,
)
from greprag.models import Block

RST = """Utils
=====

.. function:: slugify(value, allow_unicode=False)

   Converts a string to a URL slug by lowercasing it and joining its words with
   dashes, so that ``slugify`` output is safe in a URL.

.. class:: Paginator(items, per_page)

   :noindex:

   Splits a long list of items into numbered pages of a fixed size for display.
"""
MD = """# Guide

## Retry Policy

The retry policy decides how many times a failed request is sent again before giving up.

```python
# not a heading
```
"""
HTML = """<html><body><div class="body" role="main">
<dl class="py function">
<dt class="sig sig-object py" id="pkg.make_token">
<span class="sig-name">make_token</span>()</dt>
<dd><p>Create a signed token that expires after the given number of seconds.</p></dd>
</dl>
<section class="detail" id="send(Request)">
<h3>send</h3>
<div class="block">Sends one request and waits for its response from the remote server.</div>
</section>
<a id="close()"></a>
<ul class="blockList"><li class="blockList">
<h4>close</h4>
<div class="block">Closes every pooled connection and forgets the cached credentials.</div>
</li></ul>
</div></body></html>
"""
PY = '''def backoff_delay(attempt):
    """Seconds to wait before the next retry attempt, doubling every time it fails.

    More text.
    """
    return 2 ** attempt


def _private():
    """Never asked about in the benchmark because it is private to the module."""
'''


def manual(root: Path) -> Path:
    files = {"docs/utils.txt": RST, "docs/guide.md": MD, "site/api.html": HTML, "pkg/net.py": PY}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_questions_leave_the_name_out_and_point_at_the_documenting_line(tmp_path: Path):
    root = manual(tmp_path)
    rst = {q.name: q for q in rst_questions(root, "t")}
    assert rst["slugify"].line == 4 and "slugify" not in rst["slugify"].text
    assert rst["slugify"].text.startswith("Converts a string to a URL slug")
    assert rst["Paginator"].text.startswith("Splits a long list")  # the option line skipped
    (md,) = markdown_questions(root, "t")
    assert (md.line, md.name) == (3, "Retry Policy") and "retry" not in md.text.lower()
    html = {q.name: q for q in html_questions(root, "t")}
    assert html["make_token"].line == 3 and html["send"].line == 7
    assert html["close"].line == 13 and html["close"].text.startswith("Closes every pooled")
    assert html["make_token"].text.startswith("Create a signed token")
    (code,) = code_questions(root, "t", "pkg")
    assert (code.name, code.line, code.path) == ("backoff_delay", 1, "pkg/net.py")
    assert "More text" not in code.text
    (words,) = words_questions([code])  # the name's words, as a user types them
    assert (words.text, words.line, words.path) == ("backoff delay", 1, "pkg/net.py")
    every = questions_for(root, "t", "pkg", limit=1, seed=0)
    assert sorted(q.kind for q in every) == ["code", "html", "markdown", "rst", "words"]


def test_a_block_answers_when_it_spans_the_gold_line():
    q = Question("i", "t", "rst", "text", "name", "docs/a.txt", 10)
    blocks = [Block("docs/b.txt", 1, 20, "", 1.0), Block("docs/a.txt", 8, 12, "", 0.5)]
    assert answered_by(blocks, q) == 2
    assert answered_by(blocks[:1], q) is None


def test_the_window_baseline_reads_page_text_and_respects_k(tmp_path: Path):
    root = manual(tmp_path)
    system = WindowsBM25()
    system.setup(root)
    got = system.answer(root, "signed token expires seconds")
    assert got.blocks and got.blocks[0].path == "site/api.html"
    assert "<dd>" not in got.blocks[0].text  # tags do not count as words
    assert len(got.blocks) <= 10


def test_summary_rows_and_table():
    records = [
        Record("c", "rst", "q1", "grep", 1, 10.0),
        Record("c", "rst", "q2", "grep", None, 30.0),
        Record("c", "rst", "q1", "bm25-windows", 2, 5.0),
        Record("c", "rst", "q2", "bm25-windows", 1, 5.0),
    ]
    rows = {(r["kind"], r["system"]): r for r in summarize(records)}
    assert rows[("rst", "grep")]["recall"] == 0.5 and rows[("rst", "grep")]["mrr"] == 0.5
    assert rows[("rst", "bm25-windows")]["mrr"] == 0.75
    table = markdown(list(rows.values()), [])
    assert "| rst | grep | 2 | 0.500 | 0.500 | 0.500 |" in table
    assert rows[("rst", "bm25-windows")]["recall_3"] == 1.0
