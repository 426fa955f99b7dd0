"""The registry is what `cudalens rules`, `cudalens rule CL401`, the server's hovers and the docs read: every
code resolves to a documented rule with the seven headings, and every static rule has a check."""

from __future__ import annotations

import re

import pytest

from cudalens.analysis.codes import REGISTRY, all_rules, rule_class, rule_info, static_rules
from cudalens.analysis.rule_base import DOC_HEADINGS, Rule


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_rule_is_documented_with_every_heading(code: str) -> None:
    rule = rule_class(code)
    assert rule.code == code
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
    doc = rule.documentation()
    headings = re.findall(r"^## (.+)$", doc, re.M)
    assert headings == list(DOC_HEADINGS), f"{code}: headings {headings}"
    for heading, section in zip(DOC_HEADINGS, re.split(r"^## .+$", doc, flags=re.M)[1:], strict=True):
        assert section.strip(), f"{code}: empty section '{heading}'"
    assert rule.summary and "\n" not in rule.summary


def test_names_are_unique_and_lookup_works_both_ways() -> None:
    infos = all_rules()
    assert len({i.name for i in infos}) == len(infos)
    for info in infos:
        assert rule_info(info.code) == info
        assert rule_info(info.name) == info
        assert rule_info(info.code.lower()) == info


def test_static_rules_check_something_and_reported_ones_do_not_run() -> None:
    for rule in static_rules():
        cls = type(rule)
        assert cls.check is not Rule.check or cls.check_unit is not Rule.check_unit, cls.code
    reported = {c for c in REGISTRY if rule_class(c).source != "static"}
    assert {"CL901", "CL902", "CL903", "CL904", "CL905"} <= reported
    assert not reported & {type(r).code for r in static_rules()}
