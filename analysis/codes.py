"""The one registry of rule codes. A code, once published, is never reused for another rule.

Add a rule: write `analysis/rules/<pattern_name>.py` with one `Rule` subclass and list it here.
"""

from __future__ import annotations

import importlib

from cudalens.analysis.rule_base import Rule, RuleInfo

# code -> "module:Class" under cudalens.analysis.rules, in code order.
REGISTRY: dict[str, str] = {}


def rule_class(code: str) -> type[Rule]:
    module, cls = REGISTRY[code].split(":")
    return getattr(importlib.import_module(f"cudalens.analysis.rules.{module}"), cls)


def all_rules() -> list[RuleInfo]:
    return [RuleInfo.of(rule_class(code)) for code in REGISTRY]


def rule_info(code_or_name: str) -> RuleInfo | None:
    key = code_or_name.strip()
    for info in all_rules():
        if key.upper() == info.code or key == info.name:
            return info
    return None


def static_rules() -> list[Rule]:
    return [rule_class(code)() for code in REGISTRY if rule_class(code).source == "static"]
