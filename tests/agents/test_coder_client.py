"""The Coder's client against a real local OpenAI-compatible server, through the real `openai` package."""

from __future__ import annotations

import threading

import pytest

from cudalens.agents.coder.client import CoderCancelled, CoderClient, CoderError
from cudalens.agents.coder.settings import NO_KEY, CoderSettings
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
        price_in_per_1k=0.002,
        price_out_per_1k=0.008,
        **kw,
    )
    return CoderClient(settings, backoff_s=0.01)


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
        r = _client(fake, key_env, timeout_seconds=0.5).complete(MESSAGES)
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


def test_settings_from_the_editor_are_the_clients_own() -> None:
    """The editor's `coder.*` object parses straight into the client's settings (one schema)."""
    from cudalens.server.settings import parse_settings

    parsed = parse_settings({"coder": {"baseUrl": "http://x/v1", "model": "m", "apiKeyEnv": "K", "temperature": 0.1,
                                       "timeoutSeconds": 30, "retries": "many", "bogus": 1}})
    s = parsed.settings.coder
    assert isinstance(s, CoderSettings)
    assert (s.base_url, s.model, s.api_key_env, s.temperature, s.timeout_seconds) == ("http://x/v1", "m", "K", 0.1, 30)
    assert s.retries == CoderSettings().retries
    assert parsed.errors == ["cudalens: setting 'coder.retries' must be a whole number from 0 to 20, not 'many'; "
                             "using the default"]
    assert parsed.unknown == ["coder.bogus"]


def test_an_endpoint_on_this_machine_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"):
        assert CoderSettings(base_url=url, api_key_env="NO_SUCH_KEY_VAR").api_key() == NO_KEY
    for url in ("", "https://api.openai.com/v1", "http://10.0.0.5:8000/v1", "http://127.0.0.1.example.com/v1"):
        assert CoderSettings(base_url=url, api_key_env="NO_SUCH_KEY_VAR").api_key() is None
    with FakeOpenAI([reply("hello")]) as fake:
        r = CoderClient(CoderSettings(base_url=fake.base_url, api_key_env="NO_SUCH_KEY_VAR")).complete(MESSAGES)
        assert r.text == "hello" and fake.requests[0].headers["authorization"] == f"Bearer {NO_KEY}"
