"""A probe that plays the attacker's code (the user's file under test, an LLM's candidate): where it runs, it
looks for secret values in its own environment and in the environment block and argv of every ancestor it can
read (/proc/<pid>/environ, /proc/<pid>/cmdline, up to pid 1), and appends what it found to a report file."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

_PROBE = '''
def _cudalens_leak_probe(report, needles):
    import json, os
    found, read, names = [], [], []
    for name, value in os.environ.items():
        found += [f"os.environ[{name}]" for n in needles if n in value]
    pid = os.getpid()
    while pid > 0:
        for part in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            read.append([pid, part])
            found += [f"/proc/{pid}/{part}" for n in needles if n.encode() in data]
            if part == "cmdline":
                names.append(os.path.basename(data.split(b"\\0")[0].decode(errors="replace")))
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    with open(report, "a") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "found": found, "read": read, "names": names}) + "\\n")


_cudalens_leak_probe(%r, %r)
del _cudalens_leak_probe
'''


def secret_values() -> dict[str, str]:
    """Fresh values for the variables an attacker wants (nothing else on the machine can hold them)."""
    tag = uuid.uuid4().hex[:12]
    return {
        "OPENAI_API_KEY": f"sk-openai-{tag}",
        "CUDALENS_API_KEY": f"sk-cudalens-{tag}",
        "HF_TOKEN": f"hf_{tag}",
        # named by `coder.apiKeyEnv` / `--api-key-env`; looks like nothing secret, so only the setting tells
        "TEAM_LLM": f"team-llm-{tag}",
    }


def probe(report: Path, needles: list[str]) -> str:
    """Python source that runs the probe when imported; prepend it to a module."""
    return _PROBE % (str(report), needles)


@dataclass(frozen=True)
class Sighting:
    pid: int
    found: list[str]
    read: list[tuple[int, str]]
    names: list[str]  # the program name of itself and each ancestor, nearest first

    def read_environ_of(self, pid: int) -> bool:
        return (pid, "environ") in self.read


def sightings(report: Path) -> list[Sighting]:
    if not report.exists():
        return []
    out = []
    for line in report.read_text().splitlines():
        data = json.loads(line)
        out.append(Sighting(data["pid"], data["found"], [tuple(r) for r in data["read"]], data["names"]))
    return out
