"""GrepRAG: index-free, grep-first retrieval of repository context for code completion.

>>> from greprag import Retriever
>>> result = Retriever("path/to/repo").retrieve(file="pkg/mod.py", line=42, column=8)
>>> print(result.context)
"""

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
