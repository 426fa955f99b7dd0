"""The Coder's client against a real local OpenAI-compatible server, through the real `openai` package."""

from __future__ import annotations

import threading

import pytest

from cudalens.agents.coder.client import CoderCancelled, CoderClient, CoderError
from cudalens.agents.coder.settings import CoderSettings, coder_settings_from_mapping
from tests.agents.fake_openai import FakeOpenAI, error, reply

KEY = "sk-test-SECRET-0123456789"
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CUDALENS_TEST_KEY", KEY)
    return "CUDALENS_TEST_KEY"


def _client(fake: FakeOpenAI, key_env: str, **kw) -> CoderClient:
    settings = CoderSettings(
        base_url=fake.base_url,
        model="fake-o3",
        api_key_env=key_env,
        backoff_s=0.01,
        price_in_per_1k=0.002,
        price_out_per_1k=0.008,
        **kw,
    )
    return CoderClient(settings)


@pytest.mark.parametrize("stream", [False, True])
def test_reply_text_usage_and_cost(key_env: str, stream: bool) -> None:
    seen: list[str] = []
    with FakeOpenAI(
        [reply("```python\nprint('x' * 100)\n```", prompt_tokens=1200, completion_tokens=300)]
    ) as fake:
        r = _client(fake, key_env, stream=stream, temperature=0.3).complete(MESSAGES, on_text=seen.append)
    assert r.text == "```python\nprint('x' * 100)\n```"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.requests) == (1200, 300, 1)
    assert r.usage.cost_usd == pytest.approx(1.2 * 0.002 + 0.3 * 0.008)
    (req,) = fake.requests
    assert req.body["model"] == "fake-o3" and req.body["temperature"] == 0.3
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert bool(req.body.get("stream")) is stream
    assert ("".join(seen) == r.text) if stream else not seen


def test_reasoning_effort_is_sent_instead_of_temperature(key_env: str) -> None:
    with FakeOpenAI([reply("ok")]) as fake:
        _client(fake, key_env, reasoning_effort="high").complete(MESSAGES)
    assert fake.requests[0].body["reasoning_effort"] == "high" and "temperature" not in fake.requests[0].body


def test_429_with_retry_after_then_success(key_env: str) -> None:
    with FakeOpenAI([error(429, "slow down", headers={"Retry-After": "0.2"}), reply("done")]) as fake:
        r = _client(fake, key_env).complete(MESSAGES)
    assert r.text == "done" and r.usage.retries == 1 and len(fake.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_500_then_success(key_env: str, stream: bool) -> None:
    with FakeOpenAI([error(500), error(503), reply("fine")]) as fake:
        r = _client(fake, key_env, stream=stream).complete(MESSAGES)
    assert r.text == "fine" and r.usage.retries == 2 and len(fake.requests) == 3


def test_timeout_then_success(key_env: str) -> None:
    with FakeOpenAI([reply("late", delay_s=2.0), reply("in time")]) as fake:
        r = _client(fake, key_env, timeout_s=0.5).complete(MESSAGES)
    assert r.text == "in time" and r.usage.retries == 1


def test_retries_exhausted_is_a_clear_error(key_env: str) -> None:
    with FakeOpenAI([error(500)] * 3) as fake:
        with pytest.raises(CoderError, match="failed after 3 attempts: HTTP 500"):
            _client(fake, key_env, retries=2).complete(MESSAGES)


def test_auth_error_is_not_retried_and_the_key_is_redacted(key_env: str) -> None:
    with FakeOpenAI([error(401, f"Incorrect API key provided: {KEY}")]) as fake:
        with pytest.raises(CoderError) as info:
            _client(fake, key_env).complete(MESSAGES)
    assert len(fake.requests) == 1 and KEY not in str(info.value) and "[redacted]" in str(info.value)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(CoderError, match="NO_SUCH_KEY_VAR"):
        CoderClient(CoderSettings(api_key_env="NO_SUCH_KEY_VAR")).complete(MESSAGES)


def test_cancel_interrupts_the_backoff(key_env: str) -> None:
    cancel = threading.Event()
    with FakeOpenAI([error(429, headers={"Retry-After": "30"})]) as fake:
        threading.Timer(0.3, cancel.set).start()
        with pytest.raises(CoderCancelled):
            _client(fake, key_env).complete(MESSAGES, cancel=cancel)


def test_settings_from_lsp_mapping() -> None:
    s, errors = coder_settings_from_mapping(
        {
            "baseUrl": "http://x/v1",
            "model": "m",
            "apiKeyEnv": "K",
            "temperature": 0.1,
            "timeoutSeconds": 30,
            "retries": "many",
            "bogus": 1,
        }
    )
    assert (s.base_url, s.model, s.api_key_env, s.temperature, s.timeout_s) == (
        "http://x/v1",
        "m",
        "K",
        0.1,
        30,
    )
    assert s.retries == CoderSettings().retries
    assert any("retries" in e for e in errors) and any("bogus" in e for e in errors)
