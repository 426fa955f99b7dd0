"""The extension's settings mapping against the server's own parser: whatever VS Code's settings hold, the object
the extension sends is read by `cudalens.server.settings.parse_settings` without an error or an unknown key."""

from __future__ import annotations

import json
import subprocess
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
# interpreter it found the server in.
EXTENSION_FILLS = {"worker.python"}


def test_package_defaults_are_the_servers(extension_dir: Path, compiled_tests: Path) -> None:
    """Safe defaults, the same for every client: VS Code's defaults mean exactly the server's own."""
    defaults = {k: v for k, v in _defaults(extension_dir).items() if k not in EXTENSION_FILLS}
    parsed = settings_module.settings_from_initialization_options({"settings": _mapped(compiled_tests, defaults)})
    assert parsed.settings == settings_module.ServerSettings()
    assert parsed.settings.on_save == settings_module.OnSave(compile=False, test=False, time=False, profile=False)


def test_package_ranges_and_scopes_are_the_schemas(extension_dir: Path) -> None:
    """Every numeric setting's range and every setting's scope are the schema's (`setting(range=..., scope=...)`),
    so the Settings editor refuses what the server would refuse and a workspace cannot set what it may not."""
    from cudalens.server.settings_export import all_leaves
    from cudalens.worker.child.typed_json import SCOPE, value_range

    props = json.loads((extension_dir / "package.json").read_text())["contributes"]["configuration"]["properties"]
    assert set(props) == {f"cudalens.{leaf.key}" for leaf in all_leaves()}
    for leaf in all_leaves():
        spec = props[f"cudalens.{leaf.key}"]
        bounds = value_range(leaf.field)
        assert (spec.get("minimum"), spec.get("maximum")) == (bounds or (None, None)), leaf.key
        assert spec.get("scope", "window") == leaf.field.metadata[SCOPE], leaf.key
    assert props["cudalens.coder.baseUrl"]["scope"] == props["cudalens.coder.apiKeyEnv"]["scope"] == "machine"


def test_the_extensions_own_keys_are_the_schemas(compiled_tests: Path) -> None:
    """What the extension keeps to itself (how to start the server) is what the schema declares as the
    extension's: every other key is sent to the server."""
    from cudalens.server.settings_export import all_leaves

    run = subprocess.run(["node", "-e", "console.log(JSON.stringify(require(process.argv[1]).EXTENSION_KEYS))",
                          str(compiled_tests / "src" / "settings.js")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert sorted(json.loads(run.stdout)) == sorted(leaf.key for leaf in all_leaves() if not leaf.for_server)
