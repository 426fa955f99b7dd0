"""Token and cost accounting of Coder calls."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    requests: int = 0
    retries: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            self.requests + other.requests,
            self.retries + other.retries,
        )

    @classmethod
    def priced(
        cls, prompt: int, completion: int, price_in_per_1k: float, price_out_per_1k: float, retries: int = 0
    ) -> Usage:
        cost = prompt / 1000 * price_in_per_1k + completion / 1000 * price_out_per_1k
        return cls(prompt, completion, cost, 1, retries)
