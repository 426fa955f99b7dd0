"""The Coder's chat client: any OpenAI-compatible endpoint through the `openai` package.

Retries (429, 5xx, timeouts, dropped connections) are ours rather than the package's, so the delay honours the
server's Retry-After, a cancel interrupts the wait, and the count lands in the usage record. The API key is
read from the environment variable the settings name, at call time, and scrubbed from every error message.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import openai

from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.coder.usage import Usage

Message = dict[str, str]


class CoderError(Exception):
    """The Coder could not answer (bad settings, auth, or retries exhausted); the message is safe to show."""


class CoderCancelled(CoderError):
    pass


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None


_RETRYABLE = (
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APITimeoutError,
    openai.APIConnectionError,
)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


class CoderClient:
    def __init__(self, settings: CoderSettings, *, backoff_s: float = 2.0, max_backoff_s: float = 60.0) -> None:
        """`backoff_s`: the first retry's delay, doubled each retry (at most `max_backoff_s`), unless the
        endpoint sends Retry-After."""
        self.settings = settings
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s

    def _redact(self, text: str) -> str:
        key = self.settings.api_key()
        return text.replace(key, "[redacted]") if key else text

    def _client(self) -> openai.OpenAI:
        key = self.settings.api_key()
        if key is None:
            raise CoderError(
                f"cudalens: set the environment variable {self.settings.api_key_env} to the Coder's "
                "API key (or choose another with coder.apiKeyEnv / --api-key-env)"
            )
        return openai.OpenAI(
            api_key=key, base_url=self.settings.base_url or None, timeout=self.settings.timeout_seconds, max_retries=0
        )

    def _params(self, messages: list[Message], stream: bool) -> dict:
        s = self.settings
        params: dict = {"model": s.model, "messages": messages}
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if s.reasoning_effort:
            params["reasoning_effort"] = s.reasoning_effort
        if s.max_tokens:
            params["max_completion_tokens"] = s.max_tokens
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        return params

    def complete(
        self,
        messages: list[Message],
        cancel: threading.Event | None = None,
        on_text: Callable[[str], None] | None = None,
        response_format: dict | None = None,
    ) -> Reply:
        """One chat completion, streamed when the settings say so (`on_text` sees each piece)."""
        cancel = cancel or threading.Event()
        client = self._client()
        retries = 0
        while True:
            if cancel.is_set():
                raise CoderCancelled("cancelled")
            try:
                params = self._params(messages, self.settings.stream)
                if response_format is not None:
                    params["response_format"] = response_format
                if self.settings.stream:
                    text, prompt, completion, model, finish = self._stream(client, params, cancel, on_text)
                else:
                    text, prompt, completion, model, finish = self._once(client, params)
                usage = Usage.priced(
                    prompt, completion, self.settings.price_in_per_1k, self.settings.price_out_per_1k, retries
                )
                return Reply(text, usage, model, finish)
            except _RETRYABLE as exc:
                if retries >= self.settings.retries:
                    raise CoderError(
                        self._redact(
                            f"cudalens: the Coder endpoint failed after {retries + 1} "
                            f"attempts: {_describe(exc)}"
                        )
                    ) from None
                delay = _retry_after(exc)
                if delay is None:
                    delay = self.backoff_s * 2**retries
                retries += 1
                if cancel.wait(min(delay, self.max_backoff_s)):
                    raise CoderCancelled("cancelled") from None
            except openai.APIStatusError as exc:
                raise CoderError(
                    self._redact(f"cudalens: the Coder endpoint refused the request: {_describe(exc)}")
                ) from None
            except openai.OpenAIError as exc:
                raise CoderError(self._redact(f"cudalens: Coder error: {exc}")) from None

    def _once(self, client: openai.OpenAI, params: dict) -> tuple[str, int, int, str, str | None]:
        response = client.chat.completions.create(**params)
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        u = response.usage
        prompt = u.prompt_tokens if u else _estimate(params["messages"])
        completion = u.completion_tokens if u else len(text) // 4
        return (
            text,
            prompt,
            completion,
            response.model or params["model"],
            choice.finish_reason if choice else None,
        )

    def _stream(
        self,
        client: openai.OpenAI,
        params: dict,
        cancel: threading.Event,
        on_text: Callable[[str], None] | None,
    ) -> tuple[str, int, int, str, str | None]:
        parts: list[str] = []
        prompt = completion = None
        model, finish = params["model"], None
        stream = client.chat.completions.create(**params)
        try:
            for chunk in stream:
                if cancel.is_set():
                    raise CoderCancelled("cancelled")
                model = chunk.model or model
                if chunk.usage is not None:
                    prompt, completion = chunk.usage.prompt_tokens, chunk.usage.completion_tokens
                for choice in chunk.choices:
                    piece = choice.delta.content if choice.delta else None
                    if piece:
                        parts.append(piece)
                        if on_text:
                            on_text(piece)
                    finish = choice.finish_reason or finish
        finally:
            stream.close()
        text = "".join(parts)
        if prompt is None:
            prompt, completion = _estimate(params["messages"]), len(text) // 4
        return text, prompt, completion or 0, model, finish


def _estimate(messages: list[Message]) -> int:
    """Rough token count (4 characters a token) for servers that report no usage."""
    return sum(len(m.get("content", "")) for m in messages) // 4


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return f"HTTP {status}: {message}" if status else f"{type(exc).__name__}: {message}"
