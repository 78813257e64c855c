"""Docs benchmark questions, made from documented API descriptions with the API's name
removed; the gold is the place that documents it. Built by the benchmark's own readers
(regexes, ``ast``, lxml), never by docs mode's.

Kinds:

- ``rst``: a reST API entry (``.. function::``, ``.. method::``, ``.. class::``, ...);
  the question is the first sentence of its description, the gold is the directive line;
- ``markdown``: a Markdown section; the question is the first sentence of its first
  paragraph without the heading's words, the gold is the heading line;
- ``html``: a Sphinx entry (``<dt id>``) or a Javadoc member (``<section class="detail">``,
  or an older Javadoc's ``blockList`` item) of a built manual; the gold is that element's
  line (the older item's: its ``<h4>``);
- ``code``: a documented Python function or class; the question is its docstring's first
  sentence, the gold is its ``def``/``class`` line;
- ``words``: the same definitions whose names join two or more words; the question is
  those words, as a user would type them (``add_command`` → "add command",
  ``RequestBodyLimitMiddleware`` → "request body limit middleware"), the gold its line.

A block answers a question when it is from the gold's file and spans the gold line.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "QUESTION_KINDS",
    "Question",
    "answered_by",
    "code_questions",
    "html_questions",
    "markdown_questions",
    "questions_for",
    "rst_questions",
    "words_questions",
]

QUESTION_KINDS: tuple[str, ...] = ("rst", "markdown", "html", "code", "words")
MIN_WORDS = 6
MAX_WORDS = 30

_ENTRY = re.compile(
    r"^(\s*)\.\.\s+(?:py:)?(function|method|class|attribute|exception|data|decorator|"
    r"classmethod|staticmethod)::\s+(\S.*)$"
)
_ROLE = re.compile(r":[\w:.+-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_MD_HEADING = re.compile(r"^(#{2,4})\s+(.+?)\s*#*\s*$")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Question:
    id: str
    corpus: str
    kind: str
    text: str
    name: str  # the API name taken out of the question
    path: str
    line: int  # the gold line (1-based)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def answered_by(blocks, question: Question) -> int | None:
    """The 1-based rank of the first block that spans the gold line, or None."""
    for rank, block in enumerate(blocks, 1):
        if block.path == question.path and block.start_line <= question.line <= block.end_line:
            return rank
    return None


def _plain(text: str) -> str:
    """reST/Markdown inline markup removed: roles, literals, emphasis, links."""
    text = _ROLE.sub(r"\1", text)
    text = re.sub(r"\{[\w:-]+\}(?=`)", "", text)  # MyST roles: {class}`click.Group`
    text = _MD_LINK.sub(r"\1", text)
    text = re.sub(r"[`*]+", "", text)
    return " ".join(text.split())


def first_sentence(text: str) -> str:
    found = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return (found.group(1) if found else text).strip()


def _without(sentence: str, names: list[str]) -> str:
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        sentence = re.sub(rf"(?i)(?<![\w.]){re.escape(name)}(?:\(\))?(?![\w])", " ", sentence)
    return " ".join(sentence.split())


def _question(description: str, names: list[str]) -> str | None:
    sentence = _without(first_sentence(_plain(description)), names)
    words = _WORD.findall(sentence)
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    return sentence


def _files(root: Path, suffixes: tuple[str, ...], under: str = "") -> Iterator[Path]:
    base = root / under if under else root
    for path in sorted(base.rglob("*")):
        if path.suffix in suffixes and path.is_file() and ".git" not in path.parts:
            yield path


def rst_questions(root: Path, corpus: str) -> list[Question]:
    """From reST API entries under ``docs/``."""
    found = []
    for file in _files(root, (".txt", ".rst"), "docs"):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            entry = _ENTRY.match(line)
            if entry is None:
                continue
            indent = len(entry.group(1))
            signature = entry.group(3).split("(")[0].strip()
            body: list[str] = []
            for later in lines[i + 1 :]:
                if later.strip() and len(later) - len(later.lstrip()) <= indent:
                    break
                text = later.strip()
                if not text:
                    if body:
                        break
                    continue
                if text.startswith(":") or (not body and text.startswith("..")):
                    continue
                body.append(text)
            question = _question(" ".join(body), [signature, signature.split(".")[-1]])
            if question:
                rel = file.relative_to(root).as_posix()
                found.append(
                    Question(
                        f"{corpus}:{rel}:{i + 1}", corpus, "rst", question, signature, rel, i + 1
                    )
                )
    return found


def markdown_questions(root: Path, corpus: str) -> list[Question]:
    """From Markdown sections under ``docs/``: the heading is the name."""
    found = []
    for file in _files(root, (".md",), "docs"):
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        fenced = False
        for i, line in enumerate(lines):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            heading = None if fenced else _MD_HEADING.match(line)
            if heading is None:
                continue
            title = _plain(heading.group(2))
            body: list[str] = []
            for later in lines[i + 1 :]:
                text = later.strip()
                if not text:
                    if body:
                        break
                    continue
                if text.startswith(("#", "```", "~~~", ":", "{", "<", "|", "!!!", "- ", "* ")):
                    break
                body.append(text)
            names = [w for w in _WORD.findall(title) if len(w) > 2]
            question = _question(" ".join(body), [title, *names])
            if question:
                rel = file.relative_to(root).as_posix()
                found.append(
                    Question(
                        f"{corpus}:{rel}:{i + 1}", corpus, "markdown", question, title, rel, i + 1
                    )
                )
    return found


def html_questions(root: Path, corpus: str) -> list[Question]:
    """From Sphinx ``<dt id>`` entries and Javadoc members: ``<section class="detail">``
    (JDK 17), ``<a id>`` before a ``blockList`` item with an ``<h4>`` (JDK 9-11)."""
    from lxml import etree

    found = []
    for file in _files(root, (".html",)):
        try:
            tree = etree.parse(str(file), etree.HTMLParser())
        except (etree.ParserError, OSError):
            continue
        rel = file.relative_to(root).as_posix()
        entries = []
        for dt in tree.xpath("//dl[@class]/dt[@id]"):
            dd = dt.getnext()
            paragraph = dd.xpath(".//p") if dd is not None and dd.tag == "dd" else []
            if paragraph:
                name = dt.get("id").split(".")[-1]
                entries.append((dt.sourceline, name, dt.get("id"), paragraph[0]))
        for section in tree.xpath("//section[contains(@class, 'detail')][@id]"):
            block = section.xpath(".//div[contains(@class, 'block')]")
            heading = section.xpath(".//h3")
            if block and heading:
                name = "".join(heading[0].itertext()).strip()
                entries.append((section.sourceline, name, section.get("id"), block[0]))
        for item in tree.xpath("//ul[contains(@class, 'blockList')]/li[h4]"):  # JDK 9-11
            block = item.xpath("./div[contains(@class, 'block')]")
            marker = item.getparent().getprevious()
            if block and marker is not None and marker.tag == "a" and marker.get("id"):
                heading = item.find("h4")
                name = "".join(heading.itertext()).strip()
                entries.append((heading.sourceline, name, marker.get("id"), block[0]))
        for line, name, anchor, element in entries:
            question = _question("".join(element.itertext()), [name, anchor.split("(")[0]])
            if question:
                found.append(
                    Question(f"{corpus}:{rel}#{anchor}", corpus, "html", question, name, rel, line)
                )
    return found


def code_questions(root: Path, corpus: str, package: str) -> list[Question]:
    """From docstrings of public functions and classes under ``package``."""
    found = []
    for file in _files(root, (".py",), package):
        rel = file.relative_to(root).as_posix()
        if "/tests/" in f"/{rel}" or "/migrations/" in rel:
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            doc = ast.get_docstring(node)
            if not doc or node.name.startswith("_"):
                continue
            paragraph = doc.split("\n\n")[0]
            question = _question(paragraph, [node.name])
            if question:
                found.append(
                    Question(
                        f"{corpus}:{rel}:{node.lineno}",
                        corpus,
                        "code",
                        question,
                        node.name,
                        rel,
                        node.lineno,
                    )
                )
    return found


def words_questions(code: list[Question]) -> list[Question]:
    """The ``code`` questions' definitions asked for by the words their names join."""
    found = []
    for q in code:
        parts = [p.lower() for p in _NAME_PART.findall(q.name)]
        if len(parts) >= 2 and all(len(p) > 1 for p in parts):
            found.append(
                Question(
                    f"{q.id}:words", q.corpus, "words", " ".join(parts), q.name, q.path, q.line
                )
            )
    return found


def questions_for(root: Path, corpus: str, package: str, limit: int, seed: int) -> list[Question]:
    """Up to ``limit`` questions of each kind the corpus has, seeded; one per gold line, and
    none whose text another question of the corpus shares (it would have two golds)."""
    pools = {
        "rst": rst_questions(root, corpus),
        "markdown": markdown_questions(root, corpus),
        "html": html_questions(root, corpus),
        "code": code_questions(root, corpus, package) if package else [],
    }
    pools["words"] = words_questions(pools["code"])
    texts: dict[str, int] = {}
    for pool in pools.values():
        for q in pool:
            texts[q.text.lower()] = texts.get(q.text.lower(), 0) + 1
    chosen: list[Question] = []
    for kind in QUESTION_KINDS:
        pool = [q for q in pools[kind] if texts[q.text.lower()] == 1]
        random.Random(f"{seed}:{corpus}:{kind}").shuffle(pool)
        chosen += pool[:limit]
    return chosen
