"""GrepRAG: index-free, grep-first retrieval of repository context for code completion.

>>> from greprag import Retriever
>>> result = Retriever("path/to/repo").retrieve(file="pkg/mod.py", line=42, column=8)
>>> print(result.context)
"""

from greprag.config import ConfigError, Settings
from greprag.models import Block, Drop, Query, QueryPlan, Result, Skip
from greprag.pipeline import RetrievalError, Retriever
from greprag.rg import RipgrepNotFound

__all__ = [
    "Block",
    "ConfigError",
    "Drop",
    "Query",
    "QueryPlan",
    "Result",
    "RetrievalError",
    "Retriever",
    "RipgrepNotFound",
    "Settings",
    "Skip",
]
__version__ = "0.1.0"
