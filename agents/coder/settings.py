"""Settings of the Coder's endpoint (the LSP `coder.*` settings and the CLI flags map onto these)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class CoderSettings:
    base_url: str | None = None  # None: the openai package's default (api.openai.com)
    model: str = "o3"
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable; the key itself is never stored here
    temperature: float | None = None
    reasoning_effort: str | None = None  # "low" | "medium" | "high" for reasoning models
    timeout_s: float = 300.0
    retries: int = 4
    backoff_s: float = 2.0  # first retry delay, doubled each retry, unless the server sends Retry-After
    max_backoff_s: float = 60.0
    stream: bool = False
    max_tokens: int | None = None
    price_in_per_1k: float = 0.0  # USD per 1000 prompt tokens, for cost accounting
    price_out_per_1k: float = 0.0

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None


_LSP_NAMES = {
    "baseUrl": "base_url",
    "apiKeyEnv": "api_key_env",
    "reasoningEffort": "reasoning_effort",
    "timeoutSeconds": "timeout_s",
    "maxTokens": "max_tokens",
    "priceInPer1k": "price_in_per_1k",
    "priceOutPer1k": "price_out_per_1k",
}


def coder_settings_from_mapping(
    values: dict[str, Any], base: CoderSettings | None = None
) -> tuple[CoderSettings, list[str]]:
    """Settings from `{"baseUrl": ..., "model": ...}` (LSP camelCase or snake_case); bad values are reported
    and the defaults kept."""
    base = base or CoderSettings()
    types = {f.name: f.type for f in fields(CoderSettings)}
    changes: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in values.items():
        name = _LSP_NAMES.get(key, key)
        if name not in types:
            errors.append(f"cudalens: unknown coder setting '{key}' ignored")
            continue
        default = getattr(CoderSettings(), name)
        wants = types[name]
        ok = (
            (value is None and "None" in str(wants))
            or (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and ("float" in str(wants) or "int" in str(wants))
            )
            or (isinstance(value, bool) and "bool" in str(wants))
            or (isinstance(value, str) and "str" in str(wants))
        )
        if not ok:
            errors.append(f"cudalens: coder setting '{key}' has a bad value {value!r}; using {default!r}")
            continue
        if "int" in str(wants) and "float" not in str(wants) and isinstance(value, float):
            value = int(value)
        changes[name] = value
    return replace(base, **changes), errors
