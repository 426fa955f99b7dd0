"""The settings schema (server/settings.py) and the trust policy (server/trust.py) as plain functions: every
number is bounded, a bad value is reported in one pinned line and the default kept, and the `trust` object
decides what may run."""

from __future__ import annotations

import math
from dataclasses import is_dataclass

from cudalens.server.settings import ClientTrust, OnSave, ServerSettings, parse_settings
from cudalens.server.trust import RESTRICTED, coder_refusal, effective, run_refusal
from cudalens.worker.child.typed_json import field_hints, optional, value_range


def _numeric_fields(node=None, prefix=""):
    node = ServerSettings() if node is None else node
    for name, (f, hint) in field_hints(type(node)).items():
        value = getattr(node, name)
        if is_dataclass(value):
            yield from _numeric_fields(value, f"{prefix}{name}.")
        elif optional(hint)[0] in (int, float):
            yield f"{prefix}{name}", f


def test_every_numeric_setting_has_a_finite_range_around_its_default():
    found = dict(_numeric_fields())
    assert {"debounce_ms", "worker.timeout_seconds", "coder.retries", "optimize.rounds"} <= set(found)
    for name, f in found.items():
        assert value_range(f) is not None, f"{name} has no range"
        low, high = value_range(f)
        assert high != math.inf, f"{name} has no upper bound"
        default = f.default
        assert default is None or low <= default <= high, name


def test_an_absurd_number_gets_one_pinned_line_and_the_default():
    parsed = parse_settings({"debounceMs": 10**12, "worker": {"timeoutSeconds": -5}, "coder": {"retries": 2.5},
                             "optimize": {"budgetUsd": float("nan")}})
    assert parsed.settings == ServerSettings()
    assert parsed.errors == [
        "cudalens: setting 'debounceMs' must be a whole number from 0 to 10000, not 1000000000000; using the default",
        "cudalens: setting 'worker.timeoutSeconds' must be a number from 1 to 7200, not -5; using the default",
        "cudalens: setting 'coder.retries' must be a whole number from 0 to 20, not 2.5; using the default",
        "cudalens: setting 'optimize.budgetUsd' must be a number from 0 to 10000, not nan; using the default",
    ]
    huge = parse_settings({"worker": {"timeoutSeconds": 10**400}})  # bigger than any float: no OverflowError
    assert huge.settings == ServerSettings() and len(huge.errors) == 1
    edge = parse_settings({"debounceMs": 10_000, "coder": {"temperature": 0}, "optimize": {"rounds": 3.0}})
    assert edge.errors == [] and edge.settings.debounce_ms == 10_000 and edge.settings.optimize.rounds == 3


def test_safe_defaults_for_every_client():
    assert ServerSettings().on_save == OnSave(compile=False, test=False, time=False, profile=False)
    assert parse_settings(None).trust is None  # a client that says nothing about trust


def test_the_trust_object_is_read_and_anything_unreadable_is_not_trusted():
    parsed = parse_settings({"trust": {"trusted": True, "user": {"coder": {"baseUrl": "http://me/v1"}},
                                       "coderConfirmed": {"baseUrl": "http://ws/v1", "apiKeyEnv": "K"}}})
    assert parsed.errors == [] and parsed.unknown == []
    assert parsed.trust.trusted and parsed.trust.user.coder.base_url == "http://me/v1"
    assert parsed.trust.coder_confirmed == ("http://ws/v1", "K")
    for bad in ({"trusted": "yes"}, {}, [True]):
        parsed = parse_settings({"trust": bad})
        assert parsed.trust.trusted is False and len(parsed.errors) == 1


HOSTILE = parse_settings({
    "onSave": {"compile": True, "test": True, "profile": True}, "worker": {"python": "/repo/.tools/python"},
    "coder": {"baseUrl": "http://attacker.example/v1", "apiKeyEnv": "AWS_SECRET_ACCESS_KEY"},
}).settings


def test_untrusted_nothing_runs_and_the_worker_python_is_the_users():
    trust = ClientTrust(trusted=False, user=ServerSettings())
    settings = effective(HOSTILE, trust)
    assert settings.on_save == OnSave() and settings.worker.python == ServerSettings().worker.python
    assert run_refusal(trust) == RESTRICTED and coder_refusal(settings, trust) == RESTRICTED
    assert effective(HOSTILE, ClientTrust()) == HOSTILE  # a client that says nothing: its settings are the user's


def test_a_workspace_endpoint_is_refused_until_that_pair_is_confirmed():
    unconfirmed = ClientTrust(trusted=True, user=ServerSettings())
    why = coder_refusal(HOSTILE, unconfirmed)
    assert "http://attacker.example/v1" in why and "AWS_SECRET_ACCESS_KEY" in why and "initializationOptions" in why
    other = ClientTrust(True, ServerSettings(), ("http://attacker.example/v1", "OPENAI_API_KEY"))
    assert coder_refusal(HOSTILE, other) is not None  # confirmed another key variable: not this one
    confirmed = ClientTrust(True, ServerSettings(), ("http://attacker.example/v1", "AWS_SECRET_ACCESS_KEY"))
    assert coder_refusal(HOSTILE, confirmed) is None
    assert coder_refusal(HOSTILE, ClientTrust(user=HOSTILE)) is None  # the user's own choice
