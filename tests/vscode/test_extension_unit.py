"""The extension's own logic (finding the server, the settings mapping, back-off, kernel choice, status bar),
tested in plain Node with its built-in test runner: these modules do not import `vscode`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# The first test to need the extension may build it (`make vscode`: npm ci, lint, package), minutes on a cold machine.
pytestmark = pytest.mark.timeout(900)


def test_extension_logic_unit_tests_pass(compiled_tests: Path) -> None:
    # This interpreter has cudalens installed, so the tests can probe a real "python -m cudalens" environment.
    env = {**os.environ, "CUDALENS_TEST_PYTHON": sys.executable}
    run = subprocess.run(
        ["node", "--test", "--test-reporter=spec", str(compiled_tests / "test")],
        cwd=compiled_tests.parent, env=env, capture_output=True, text=True, timeout=240,
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-6000:]
    passed = re.search(r"ℹ pass (\d+)", report)
    failed = re.search(r"ℹ fail (\d+)", report)
    assert passed and int(passed.group(1)) >= 25, report[-3000:]
    assert failed and int(failed.group(1)) == 0, report[-3000:]


def test_packaged_extension_declares_no_language_and_every_command(extension_dir: Path) -> None:
    with zipfile.ZipFile(extension_dir / "dist" / "cudalens.vsix") as vsix:
        names = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
    assert "extension/dist/extension.js" in names
    assert not any(n.startswith("extension/node_modules/") or n.startswith("extension/src/") for n in names)
    # cuda-cpp comes from VS Code's built-in C++ grammar; redeclaring it would fight that extension.
    assert "languages" not in manifest["contributes"]
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert commands == {
        "cudalens.optimizeKernelAtCursor", "cudalens.runTestsAtCursor", "cudalens.profileAtCursor",
        "cudalens.validateAtCursor", "cudalens.restartServer", "cudalens.showOutput", "cudalens.setApiKey",
        "cudalens.showReportForFile",
    }
    settings = manifest["contributes"]["configuration"]["properties"]
    for shared in ("select", "ignore", "arch", "onSave.compile", "onSave.test", "onSave.time", "onSave.profile",
                   "worker.python", "worker.timeoutSeconds", "coder.baseUrl", "coder.model", "coder.apiKeyEnv",
                   "coder.temperature", "coder.reasoningEffort", "coder.timeoutSeconds", "coder.retries",
                   "optimize.rounds", "optimize.budgetUsd", "logLevel", "path", "interpreter"):
        assert f"cudalens.{shared}" in settings, shared
    assert not any("apikey" in key.lower() and key != "cudalens.coder.apiKeyEnv" for key in settings)
