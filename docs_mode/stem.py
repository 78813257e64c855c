"""Light stemming: the few English suffixes that change a word's form, not its sense.

``stem`` strips a plural, ``-ed``, ``-ing``, ``-ation``, ``-ment`` or a final ``e``
(``configured``, ``configuring``, ``configuration`` → ``configur``; ``retries`` →
``retry``); ``word_pattern`` is the regex that finds every such form of a stem, so rg
and the BM25 term counts see the same words. Deliberately light: a Porter stemmer joins
``general`` and ``generate``, which a search for one should not find for the other.
"""

from __future__ import annotations

import re

__all__ = ["stem", "word_forms", "word_pattern"]

_Y_SUFFIXES = ("ies", "ied", "ying")
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ers", "ed", "es", "s", "e")
_UNDOUBLE = ("ings", "ing", "ed", "ers")
_KEEP_ENDINGS = ("ss", "us", "is", "ous")
_DOUBLED = frozenset("bdgmnprt")
_FORMS = "e|es|s|ed|d|ing|ings|er|ers|ion|ions|ation|ations|ate|ates|ated|ating|ment|ments"
_SHORT_FORMS = "s|es"
_Y_FORMS = "y|ies|ied|ying|yed"
MIN_STEM = 4  # "string" keeps its "ing", "setting" is not "set"


def stem(word: str) -> str:
    """The light stem of ``word`` (lowercased): at most one suffix goes, and only when at
    least ``MIN_STEM`` letters remain."""
    w = word.lower()
    if len(w) <= MIN_STEM or not w.isalpha():
        return w
    for suffix in _Y_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            return w[: -len(suffix)] + "y"  # retries → retry
    if w.endswith(_KEEP_ENDINGS):
        return w
    for suffix in _SUFFIXES:
        if not w.endswith(suffix):
            continue
        root = w[: -len(suffix)]
        if suffix in _UNDOUBLE and len(root) > 2 and root[-1] == root[-2] in _DOUBLED:
            root = root[:-1]  # stopped → stop
        if len(root) >= MIN_STEM:
            return root
    return w


def word_pattern(word: str, stemming: bool = True) -> str:
    """A case-insensitive regex (rg's and Python's syntax) for ``word`` and, with
    ``stemming``, its other forms: ``configure`` → ``(?i)\\bconfigur(?:e|es|...)?\\b``."""
    return rf"(?i)\b{word_forms(word, stemming)}\b"


def word_forms(word: str, stemming: bool = True) -> str:
    """``word_pattern`` without its flag and word boundaries: the forms alone, lowercase,
    for a caller that puts them inside a larger pattern."""
    w = word.lower()
    if not stemming:
        return re.escape(w)
    root = stem(w)
    if root.endswith("y") and len(root) >= MIN_STEM:
        return f"{re.escape(root[:-1])}(?:{_Y_FORMS})"
    if len(root) < MIN_STEM:
        return f"{re.escape(root)}(?:{_SHORT_FORMS})?"
    body = f"{re.escape(root)}(?:{_FORMS})?"
    if len(root) == MIN_STEM and root[-1] in _DOUBLED and root[-2] in "aeiou":
        body = f"(?:{body}|{re.escape(root)}{root[-1]}(?:ed|ing|er|ers))"  # stop → stopped
    return body
