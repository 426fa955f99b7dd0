"""The extension's trust logic (vscode-client/src/trust.ts) and the server's (server/trust.py) together, for the
attacker's repository of tests/security: what the extension sends for it is, once the server has read it, a
server that runs nothing in Restricted Mode, and never sends the key to the workspace's endpoint unasked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.security.test_workspace_trust import SECRET_ENV, attacker_repository

pytestmark = pytest.mark.timeout(900)  # the first test to need the extension may build it
settings_module = pytest.importorskip("cudalens.server.settings", reason="the language server is not in this checkout")
trust_module = pytest.importorskip("cudalens.server.trust", reason="the language server is not in this checkout")

USER = {"cudalens.coder.baseUrl": "http://127.0.0.1:8000/v1", "cudalens.onSave.test": True}


def _sent(compiled_tests: Path, user: dict, workspace: dict, state: dict) -> dict:
    """trustedSettings() of the compiled extension, with VS Code's two levels as `get` and `inspect` answer."""
    script = (
        "const { trustedSettings } = require(process.argv[1]);"
        "const [user, ws, state] = JSON.parse(process.argv[2]);"
        "const get = (k) => (k in ws ? ws[k] : user[k]);"
        "const inspect = (k) => ({ globalValue: user[k], workspaceValue: ws[k] });"
        "const out = trustedSettings(get, inspect, state);"
        "console.log(JSON.stringify({ settings: out.settings, unanswered: out.unansweredCoder ?? null }));"
    )
    strip = lambda d: {k.removeprefix("cudalens."): v for k, v in d.items()}  # noqa: E731
    run = subprocess.run(
        ["node", "-e", script, str(compiled_tests / "src" / "trust.js"),
         json.dumps([strip(user), strip(workspace), state])],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _server(sent: dict):
    parsed = settings_module.parse_settings(sent["settings"])
    assert parsed.errors == [] and parsed.unknown == [] and parsed.trust is not None
    return trust_module.effective(parsed.settings, parsed.trust), parsed.trust


def test_restricted_mode_the_server_runs_nothing(compiled_tests: Path, tmp_path: Path) -> None:
    workspace = attacker_repository(tmp_path / "repo", "http://127.0.0.1:9/v1")
    settings, trust = _server(_sent(compiled_tests, USER, workspace, {"trusted": False}))
    assert settings.on_save == settings_module.OnSave()
    assert ".tools" not in settings.worker.python
    assert trust_module.run_refusal(trust) == trust_module.RESTRICTED
    assert trust_module.coder_refusal(settings, trust) == trust_module.RESTRICTED


def test_trusted_the_workspace_endpoint_needs_the_users_answer(compiled_tests: Path, tmp_path: Path) -> None:
    workspace = attacker_repository(tmp_path / "repo", "http://127.0.0.1:9/v1")
    unasked = _sent(compiled_tests, USER, workspace, {"trusted": True})
    assert unasked["unanswered"] == {"baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": SECRET_ENV}
    settings, trust = _server(unasked)
    assert settings.on_save.profile and ".tools" in settings.worker.python  # trusted: the workspace's choice
    assert (settings.coder.base_url, settings.coder.api_key_env) == ("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")
    assert trust_module.coder_refusal(settings, trust) is None  # the user's own endpoint: nothing to ask

    chosen, trust = _server(_sent(compiled_tests, USER, workspace, {"trusted": True, "coderChoice": "workspace"}))
    assert (chosen.coder.base_url, chosen.coder.api_key_env) == ("http://127.0.0.1:9/v1", SECRET_ENV)
    assert trust_module.coder_refusal(chosen, trust) is None  # confirmed
    # Had the extension sent the workspace's endpoint without the confirmation, the server would refuse it.
    unconfirmed = settings_module.ClientTrust(trusted=True, user=trust.user, coder_confirmed=None)
    assert "not your own settings" in trust_module.coder_refusal(chosen, unconfirmed)
