"""GrepRAG: index-free, grep-first retrieval of repository context for code completion.

>>> from greprag import Retriever
>>> result = Retriever("path/to/repo").retrieve(file="pkg/mod.py", line=42, column=8)
>>> print(result.context)

``Retriever`` loads on first use: a CLI call that a running server answers never pays
for the pipeline's imports (about 100 ms).
"""

from typing import TYPE_CHECKING, Any

from greprag.config import Settings
from greprag.errors import (
    ConfigError,
    DenseError,
    GrepRAGError,
    LLMError,
    QueryRejected,
    RetrievalError,
    RipgrepNotFound,
    RouterError,
    SearchError,
    StorageError,
)
from greprag.models import Block, Drop, Query, QueryPlan, Result, Skip

if TYPE_CHECKING:
    from greprag.pipeline import Retriever

__all__ = [
    "Block",
    "ConfigError",
    "DenseError",
    "Drop",
    "GrepRAGError",
    "LLMError",
    "Query",
    "QueryPlan",
    "QueryRejected",
    "Result",
    "RetrievalError",
    "Retriever",
    "RipgrepNotFound",
    "RouterError",
    "SearchError",
    "Settings",
    "Skip",
    "StorageError",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "Retriever":
        from greprag.pipeline import Retriever

        return Retriever
    raise AttributeError(f"module 'greprag' has no attribute {name!r}")
