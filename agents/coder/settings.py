"""The Coder's endpoint: the one schema behind the editor's `coder.*` settings and `cudalens optimize`'s flags.

Each field declares its default, range and words (`setting`); server/settings.py parses the editor's values into
it and settings_export.py writes package.json's contributions and the docs' tables from it.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlparse

from cudalens.worker.child.typed_json import setting

# Sent as the key to an endpoint on this machine that needs none (a local vLLM or llama.cpp server): the openai
# package insists on some key, and nothing secret is sent.
NO_KEY = "no-key-needed"


@dataclass(frozen=True)
class CoderSettings:
    base_url: str = setting(
        "", scope="machine", restricted=True, unset="api.openai.com",
        doc="Base URL of an OpenAI-compatible endpoint for the Coder (e.g. `http://127.0.0.1:8000/v1`). Yours "
            "only (user or remote settings): your API key and source go there, so a workspace's value is used "
            "only after you confirm it.",
    )
    model: str = setting("o3", doc="Model name sent to the Coder endpoint.")
    api_key_env: str = setting(
        "OPENAI_API_KEY", scope="machine", restricted=True,
        doc="The *name* of the environment variable that holds the API key (the key itself is never a setting: "
            "VS Code's **cudalens: Set API key** stores it). Yours only (user or remote settings), like "
            "`coder.baseUrl`. An endpoint on this machine needs no key.",
    )
    temperature: float | None = setting(
        None, range=(0, 2), unset="not sent (reasoning models refuse it)", doc="Sampling temperature.",
    )
    reasoning_effort: Literal["low", "medium", "high"] | None = setting(
        None, unset="not sent", doc="Reasoning effort, for reasoning models.",
    )
    timeout_seconds: float = setting(300.0, range=(1, 3600), doc="Time limit of one Coder request, in seconds.")
    retries: int = setting(
        4, range=(0, 20), doc="Retries of a failed request (rate limits, server errors, timeouts, lost connections).",
    )
    stream: bool = setting(False, doc="Stream the Coder's replies.")
    max_tokens: int | None = setting(
        None, range=(1, 1_000_000), unset="the endpoint's limit", doc="Longest reply, in tokens.",
    )
    price_in_per_1k: float = setting(
        0.0, range=(0, 1000), doc="USD per 1000 prompt tokens, for the cost shown and the budget.",
    )
    price_out_per_1k: float = setting(
        0.0, range=(0, 1000), doc="USD per 1000 completion tokens, for the cost shown and the budget.",
    )

    def api_key(self) -> str | None:
        """The key from the environment; for an endpoint on this machine without one, a placeholder."""
        key = os.environ.get(self.api_key_env) or None
        if key is None and is_local(self.base_url):
            return NO_KEY
        return key


def is_local(base_url: str) -> bool:
    """An endpoint on this machine (loopback), which may need no key."""
    host = urlparse(base_url).hostname if base_url else None
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
