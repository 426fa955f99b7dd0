"""Workspace trust: what the server may run, given what the editor said about the workspace (`ClientTrust`).

A workspace (its `.vscode/settings.json`, its pyproject.toml, its files) may choose rules and display. It may not
choose a program to run, the Coder's endpoint or key variable, or turn on running code, unless the user trusted
it. So in an untrusted workspace (VS Code's Restricted Mode) nothing runs — no compile, test, time or profile, on
save or on demand, and no Coder — only the static hints; and a Coder endpoint or key variable that differs from
the user's own settings is not used until the user confirms it once (the extension asks, and says so in the
`trust` object). docs/security.md has the whole picture.
"""

from __future__ import annotations

from dataclasses import replace

from cudalens.server.settings import ClientTrust, OnSave, ServerSettings

RESTRICTED = (
    "cudalens: this workspace is not trusted (Restricted Mode): only static hints; nothing is compiled, run, "
    "profiled or sent to the Coder. Trust the workspace to turn these on."
)


def effective(settings: ServerSettings, trust: ClientTrust) -> ServerSettings:
    """The settings the server acts on: in an untrusted workspace nothing runs on save, and the worker's Python
    is the user's own (the extension already sends only user values for these; this holds for any client)."""
    if trust.trusted:
        return settings
    user = trust.user or ServerSettings()
    return replace(settings, on_save=OnSave(), worker=replace(settings.worker, python=user.worker.python))


def key_variable(settings: ServerSettings, trust: ClientTrust) -> str:
    """The variable that holds the Coder's key the server would send: the user's own choice, or a workspace's
    once the user confirmed it in a trusted workspace; never a refused workspace's (issue 34: a refused
    `apiKeyEnv: "PATH"` hid PATH from every child for the rest of the session)."""
    chosen = workspace_coder(settings, trust)
    if chosen is None or (trust.trusted and chosen == trust.coder_confirmed):
        return settings.coder.api_key_env
    return trust.user.coder.api_key_env if trust.user is not None else settings.coder.api_key_env


def run_refusal(trust: ClientTrust) -> str | None:
    """Why nothing may run for this workspace (compile, test, profile, validate, the Coder), or None."""
    return None if trust.trusted else RESTRICTED


def workspace_coder(settings: ServerSettings, trust: ClientTrust) -> tuple[str, str] | None:
    """(baseUrl, apiKeyEnv) when they are not the user's own choice — a workspace's settings chose them — else
    None. Only a client that sends the user's level can tell; the others send only what their user wrote."""
    if trust.user is None:
        return None
    chosen = (settings.coder.base_url, settings.coder.api_key_env)
    own = (trust.user.coder.base_url, trust.user.coder.api_key_env)
    return chosen if chosen != own else None


def coder_refusal(settings: ServerSettings, trust: ClientTrust) -> str | None:
    """Why the user's key and source may not be sent to the configured Coder endpoint now, or None."""
    if why := run_refusal(trust):
        return why
    chosen = workspace_coder(settings, trust)
    if chosen is None or chosen == trust.coder_confirmed:
        return None
    url, env = chosen
    return (
        f"cudalens: this workspace's settings choose the Coder endpoint {url or 'api.openai.com'} and the key "
        f"variable {env}, not your own settings; nothing is sent there until you confirm them once (VS Code asks "
        "when you ask the Coder). To choose them yourself, set `cudalens.coder.baseUrl` and "
        "`cudalens.coder.apiKeyEnv` in your user settings (another editor: in the client's initializationOptions)."
    )
