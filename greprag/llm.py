"""The one place litellm is imported (lazily: the import takes seconds).

The model (any litellm name, e.g. ``openai/gpt-4o-mini`` or ``ollama/qwen2.5-coder``),
API base and key come from the resolved settings (``greprag.config``: the user's config,
``GREPRAG_MODEL``/``GREPRAG_API_BASE``/``GREPRAG_API_KEY`` or arguments, never a
repository's config). Without an API base or key, litellm's own variables apply
(``OPENAI_API_BASE``, the provider's usual key variable).
"""

from __future__ import annotations

import os
import queue
import re
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

from greprag.errors import LLMError

NO_MODEL = "no LLM model configured (set GREPRAG_MODEL, or model in the user config)"
_END = object()  # the stream finished


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # pydantic warns about litellm's own TypedDicts when streaming types are first built:
    # noise on the user's terminal, nothing they can act on
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
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


def _request(
    model: str,
    messages: list[dict],
    timeout: float,
    api_base: str | None,
    api_key: str | None,
    max_tokens: int,
) -> dict[str, Any]:
    """litellm keyword arguments for one deterministic request, no retries."""
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
    return kwargs


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
    kwargs = _request(model, messages, timeout, api_base, api_key, max_tokens)
    litellm = _litellm()
    response = _call_with_deadline(lambda: litellm.completion(**kwargs), timeout)
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMError("malformed answer (no message content)") from exc
    if not isinstance(content, str) or not content.strip():
        raise LLMError("empty answer")
    return content


def _delta_text(chunk: Any) -> str:
    try:
        text = chunk.choices[0].delta.content
    except (AttributeError, IndexError, TypeError):
        return ""
    return text if isinstance(text, str) else ""


def stream_text(
    model: str,
    messages: list[dict],
    *,
    timeout: float,
    api_base: str | None = None,
    api_key: str | None = None,
    max_tokens: int = 800,
) -> Iterator[str]:
    """Yield ``model``'s reply piece by piece as it streams.

    ``timeout`` caps the wall time of the whole answer (the litellm import excluded); a
    timeout, an HTTP error or a broken stream raises ``LLMError``, after whatever pieces
    already came (the caller decides what to keep).
    """
    kwargs = {**_request(model, messages, timeout, api_base, api_key, max_tokens), "stream": True}
    litellm = _litellm()
    pieces: queue.Queue[object] = queue.Queue()

    def work() -> None:
        try:
            for chunk in litellm.completion(**kwargs):
                if text := _delta_text(chunk):
                    pieces.put(text)
            pieces.put(_END)
        except Exception as exc:  # handed to the consumer below
            pieces.put(exc)

    threading.Thread(target=work, name="greprag-llm-stream", daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            item = pieces.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise LLMError(f"timed out after {timeout:g} s") from None
        if item is _END:
            return
        if isinstance(item, Exception):
            raise LLMError(_describe(item)) from item
        yield str(item)
