"""The ``docs`` extra: its parsers load on first use, with a clear refusal when missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from greprag.errors import DocsError

__all__ = ["need"]


def need(module: str, package: str) -> ModuleType:
    """Import ``module`` (a parser of the ``docs`` extra) or raise ``DocsError`` naming
    the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise DocsError(
            f"reading this format needs {package} (pip install 'greprag[docs]')"
        ) from None
