"""The one place litellm is imported (lazily: the import takes seconds).

The model (any litellm name, e.g. ``openai/gpt-4o-mini`` or ``ollama/qwen2.5-coder``),
API base and key come from the resolved settings (``greprag.config``: the user's config,
``GREPRAG_MODEL``/``GREPRAG_API_BASE``/``GREPRAG_API_KEY`` or arguments, never a
repository's config). Without an API base or key, litellm's own variables apply
(``OPENAI_API_BASE``, the provider's usual key variable).
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

from greprag.errors import LLMError

NO_MODEL = "no LLM model configured (set GREPRAG_MODEL, or model in the user config)"


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    # "litellm.InternalServerError: InternalServerError: OpenAIException - boom" → "boom"
    text = re.sub(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)\s*[:-]\s*)+", "", text)
    text = text or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__.lower()
    if "timeout" in name:
        return "timed out"
    if "connection" in name:
        return f"connection failed: {_short(exc)}"
    if isinstance(status, int) and status >= 400:
        return f"HTTP {status}: {_short(exc)}"
    return f"{type(exc).__name__}: {_short(exc)}"


def _call_with_deadline(call: Any, timeout: float) -> Any:
    """Run ``call()`` in a daemon thread; give up after ``timeout`` seconds of wall time."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = call()
        except Exception as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=work, name="greprag-llm", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise LLMError(f"timed out after {timeout:g} s")
    if "error" in box:
        raise LLMError(_describe(box["error"])) from box["error"]
    return box["value"]


def complete_json(
    model: str,
    messages: list[dict],
    *,
    timeout: float,
    api_base: str | None = None,
    api_key: str | None = None,
    max_tokens: int = 800,
) -> str:
    """Ask ``model`` and return the reply text, unparsed.

    ``timeout`` caps the wall time of the request (the one-off litellm import is not
    counted). No retries, so callers can fall back fast. Raises ``LLMError``.
    """
    if not model:
        raise LLMError(NO_MODEL)
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "timeout": timeout,
        "max_tokens": max_tokens,
        "temperature": 0,
        "num_retries": 0,
        "drop_params": True,
    }
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    litellm = _litellm()
    response = _call_with_deadline(lambda: litellm.completion(**kwargs), timeout)
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMError("malformed answer (no message content)") from exc
    if not isinstance(content, str) or not content.strip():
        raise LLMError("empty answer")
    return content
