"""The extension's settings mapping against the server's own parser: whatever VS Code's settings hold, the object
the extension sends is read by `cudalens.server.settings.parse_settings` without an error or an unknown key."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

# The first test to need the extension may build it (`make vscode`: npm ci, lint, package), minutes on a cold machine.
pytestmark = pytest.mark.timeout(900)

settings_module = pytest.importorskip("cudalens.server.settings", reason="the language server is not in this checkout")

# VS Code's values as a user might set them, and as they are by default (package.json's defaults).
USER_VALUES = {
    "select": ["CL1", "CL301"], "ignore": ["CL5"], "arch": "sm_90", "onSave.compile": True, "onSave.test": True,
    "onSave.time": False, "onSave.profile": True, "worker.python": "/opt/torch/bin/python",
    "worker.timeoutSeconds": 60, "coder.baseUrl": "http://127.0.0.1:8000/v1", "coder.model": "o3",
    "coder.apiKeyEnv": "MY_KEY", "coder.temperature": 0.3, "coder.reasoningEffort": "high",
    "coder.timeoutSeconds": 30, "coder.retries": 1, "optimize.rounds": 4, "optimize.budgetUsd": 0.25,
    "logLevel": "debug",
}


def _defaults(extension_dir: Path) -> dict:
    manifest = json.loads((extension_dir / "package.json").read_text())
    props = manifest["contributes"]["configuration"]["properties"]
    return {key.removeprefix("cudalens."): spec["default"] for key, spec in props.items()}


def _mapped(compiled_tests: Path, values: dict) -> dict:
    script = (
        "const { mapSettings } = require(process.argv[1]);"
        "const values = JSON.parse(process.argv[2]);"
        "const out = mapSettings((k) => values[k]);"
        "if (out.problems.length) { console.error(out.problems.join('\\n')); process.exit(1); }"
        "console.log(JSON.stringify(out.settings));"
    )
    run = subprocess.run(["node", "-e", script, str(compiled_tests / "src" / "settings.js"), json.dumps(values)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("which", ["defaults", "user values"])
def test_server_reads_what_the_extension_sends(which: str, extension_dir: Path, compiled_tests: Path) -> None:
    values = _defaults(extension_dir) if which == "defaults" else USER_VALUES
    sent = _mapped(compiled_tests, values)
    parsed = settings_module.settings_from_initialization_options({"settings": sent})
    assert parsed.errors == []
    assert parsed.unknown == []
    if which == "user values":
        s = parsed.settings
        assert (tuple(s.select), tuple(s.ignore), s.arch) == (("CL1", "CL301"), ("CL5",), "sm_90")
        assert (s.on_save.compile, s.on_save.test, s.on_save.time, s.on_save.profile) == (True, True, False, True)
        assert (s.worker.python, s.worker.timeout_seconds) == ("/opt/torch/bin/python", 60)
        assert (s.coder.base_url, s.coder.model, s.coder.api_key_env) == ("http://127.0.0.1:8000/v1", "o3", "MY_KEY")
        assert (s.coder.temperature, s.coder.reasoning_effort, s.coder.timeout_seconds, s.coder.retries) == (
            0.3, "high", 30, 1)
        assert (s.optimize.rounds, s.optimize.budget_usd, s.log_level) == (4, 0.25, "debug")


# Where the extension's defaults may differ from the server's: the extension fills `worker.python` with the
# interpreter it found the server in, and always sends a log level (the server's None: as `--log-level` says).
EXTENSION_FILLS = {"worker.python", "logLevel"}


def test_package_defaults_are_the_servers(extension_dir: Path, compiled_tests: Path) -> None:
    """Safe defaults, the same for every client: VS Code's defaults mean exactly the server's own."""
    defaults = {k: v for k, v in _defaults(extension_dir).items() if k not in EXTENSION_FILLS}
    parsed = settings_module.settings_from_initialization_options({"settings": _mapped(compiled_tests, defaults)})
    assert replace(parsed.settings, log_level=None) == settings_module.ServerSettings()
    assert parsed.settings.on_save == settings_module.OnSave(compile=False, test=False, time=False, profile=False)


def _server_field(key: str):
    """The dataclass field a `cudalens.*` key of package.json maps to (None: an extension-only setting)."""
    from dataclasses import fields, is_dataclass

    node: object = settings_module.ServerSettings()
    found = None
    for part in key.removeprefix("cudalens.").split("."):
        if not is_dataclass(node):
            return None
        by_name = {f.name: f for f in fields(node)}
        found = by_name.get(settings_module._snake(part))
        if found is None:
            return None
        node = getattr(node, found.name)
    return found


def test_package_ranges_are_the_servers(extension_dir: Path) -> None:
    """Every numeric setting's range is the schema's (server/settings.py `bounded`), so the Settings editor
    refuses what the server would refuse."""
    props = json.loads((extension_dir / "package.json").read_text())["contributes"]["configuration"]["properties"]
    numeric = {k: p for k, p in props.items() if {"number", "integer"} & set(p["type"] if isinstance(p["type"], list) else [p["type"]])}
    assert numeric
    for key, spec in numeric.items():
        field = _server_field(key)
        assert field is not None, key
        assert (spec.get("minimum"), spec.get("maximum")) == settings_module.value_range(field), key
