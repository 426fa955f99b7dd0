"""Which variables of this environment are secrets a candidate must not see (the Coder's API key and anything
named like a credential). The worker that runs candidates starts with them blanked, and the profiled target's
environment goes without them."""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)


def secret_names(named: tuple[str, ...]) -> list[str]:
    """The variables of this environment a candidate must not see: those named, and any named like a
    credential (…API_KEY, …TOKEN, …SECRET, …PASSWORD)."""
    return [k for k in os.environ if k in named or _SECRET_NAME.search(k)]
