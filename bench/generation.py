"""Completions by an LLM (any litellm model, through ``greprag.llm``) for the --model metrics.

The prompt is the retrieved context followed by the local context; the completion's first
line is compared with the ground truth. ``probe`` asks once with a short timeout so a run
without a reachable model skips generation at once, saying why.
"""

from __future__ import annotations

from greprag.config import load_settings
from greprag.errors import LLMError
from greprag.llm import complete_json

_SYSTEM = (
    "You complete code. Reply with the rest of the current line only: no explanation, "
    "no code fences, no repetition of the text before the cursor."
)
LOCAL_LINES = 60


def messages(context: str, left: str, path: str) -> list[dict]:
    """Retrieved context first, then the local context up to the cursor."""
    local = "\n".join(left.split("\n")[-LOCAL_LINES:])
    retrieved = f"Repository context:\n{context}\n\n" if context else ""
    user = f"{retrieved}File {path}, complete the last line:\n{local}"
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def first_line(reply: str) -> str:
    """The completion's first non-fence line, as a continuation of the cursor line."""
    lines = [ln for ln in reply.split("\n") if not ln.strip().startswith("```")]
    return lines[0].rstrip() if lines else ""


def _ask(model: str, messages: list[dict], timeout: float, max_tokens: int) -> str:
    """One completion, with the API base and key the user configured (config, env)."""
    settings = load_settings(None)
    return complete_json(
        model,
        messages,
        timeout=timeout,
        max_tokens=max_tokens,
        api_base=settings.api_base or None,
        api_key=settings.api_key or None,
    )


def probe(model: str, timeout: float = 10.0) -> str | None:
    """None when ``model`` answers; otherwise why it cannot be used."""
    try:
        _ask(model, [{"role": "user", "content": "Reply with: ok"}], timeout, 4)
    except LLMError as exc:
        return exc.reason
    return None


def complete(model: str, context: str, left: str, path: str, timeout: float = 30.0) -> str:
    """The model's completion of the cursor line ("" when it fails)."""
    try:
        return first_line(_ask(model, messages(context, left, path), timeout, 96))
    except LLMError:
        return ""
