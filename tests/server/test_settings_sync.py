"""One settings schema: package.json's contributions and the settings tables of docs/editors.md and docs/vscode.md
are what `python -m cudalens.server.settings_export` writes from the dataclasses, and the server, the CLI and the
agents read the same dataclasses."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.optimize_settings import OptimizeSettings
from cudalens.cli import optimize_cmd
from cudalens.server import settings_export
from cudalens.server.settings import ServerSettings, parse_settings
from cudalens.worker.child.typed_json import DOC, UNSET, optional, value_range
from cudalens.worker.settings import WorkerSettings


def test_generated_files_are_in_sync_with_the_schema():
    run = subprocess.run([sys.executable, "-m", "cudalens.server.settings_export", "--check"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_every_setting_is_documented_and_an_empty_one_says_what_empty_means():
    for leaf in settings_export.all_leaves():
        assert leaf.field.metadata.get(DOC), leaf.key
        if leaf.default is None or optional(leaf.hint)[1]:
            assert UNSET in leaf.field.metadata, f"{leaf.key}: say what unset means"
        if optional(leaf.hint)[0] in (int, float):
            assert value_range(leaf.field) is not None, f"{leaf.key} has no range"


def test_vscode_exposes_every_server_setting_and_its_defaults_mean_the_servers():
    """The settings editors.md lists but VS Code did not expose (prices, coder.stream, optimize.patience,
    optimize.allowTorchOps, debounceMs) are there, and VS Code's defaults parse to the server's defaults."""
    props = json.loads(settings_export.PACKAGE_JSON.read_text())["contributes"]["configuration"]["properties"]
    server_keys = [leaf.key for leaf in settings_export.leaves(ServerSettings)]
    assert {"coder.priceInPer1k", "coder.stream", "optimize.patience", "optimize.allowTorchOps", "debounceMs"} <= set(
        server_keys)
    assert {f"cudalens.{k}" for k in server_keys} <= set(props)
    nested: dict = {}
    for key in server_keys:
        *parents, last = key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        default = props[f"cudalens.{key}"]["default"]
        node[last] = None if default == [] else default  # the extension sends an empty list as null: unset
    parsed = parse_settings(nested)
    assert parsed.errors == [] and parsed.unknown == []
    assert parsed.settings == ServerSettings()


def test_the_cli_and_the_agents_take_their_defaults_from_the_same_schema():
    parser = argparse.ArgumentParser()
    optimize_cmd.add_arguments(parser)
    args = parser.parse_args(["m.py"])
    coder, optimize, worker = CoderSettings(), OptimizeSettings(), WorkerSettings()
    assert (args.coder_model, args.api_key_env, args.coder_timeout, args.retries) == (
        coder.model, coder.api_key_env, coder.timeout_seconds, coder.retries)
    assert (args.price_in, args.price_out) == (coder.price_in_per_1k, coder.price_out_per_1k)
    assert (args.rounds, args.budget, args.patience) == (optimize.rounds, optimize.budget_usd, optimize.patience)
    assert (args.worker_python, args.timeout) == (worker.python, worker.timeout_seconds)
    server = ServerSettings()
    assert (server.coder, server.optimize, server.worker) == (coder, optimize, worker)
