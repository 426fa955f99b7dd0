"""The library corpus (issue 35): hand-written CUDA from public libraries the analyzer was never tuned on,
with every warning/error finding labelled by reading the kernel and its launches.

    python benchmarks/accuracy/library_corpus.py fetch [--mirror-root /work/.mirror]
    python benchmarks/accuracy/library_corpus.py score [--unlabelled]

`fetch` copies the files `libraries.json` lists, byte for byte at the pinned commits, into the git-ignored
`benchmarks/accuracy/libraries/owner+name/path` (never committed: only the list and the labels are).
`score` runs `cudalens check --format json` on that folder as a user would and prints, per repository and per
code, the findings and the precision of those `library_labels.json` labels (key `owner/name:path:line:code`,
value `[true|false, "the reason"]`); `--unlabelled` lists the findings nobody has labelled yet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fetch_public import read_source

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MANIFEST = HERE / "libraries.json"
LABELS = HERE / "library_labels.json"
OUT = HERE / "libraries"


def fetch(mirror_root: Path | None) -> int:
    count = 0
    for entry in json.loads(MANIFEST.read_text())["repos"]:
        for path in entry["paths"]:
            target = OUT / entry["repo"].replace("/", "+") / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(read_source(entry["repo"], entry["commit"], path, mirror_root))
            count += 1
    print(f"{count} files into {OUT}")
    return 0


def findings() -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "cudalens", "check", "--format", "json", "--select", "CL",
                           str(OUT)], capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"cudalens check failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)["findings"]


def key(finding: dict) -> tuple[str, str]:
    """(repository, `owner/name:path:line:code`) of a finding under OUT."""
    relative = Path(finding["path"]).resolve().relative_to(OUT.resolve())
    repo = relative.parts[0].replace("+", "/", 1)
    return repo, f"{repo}:{Path(*relative.parts[1:])}:{finding['line']}:{finding['code']}"


def score(show_unlabelled: bool) -> int:
    labels = json.loads(LABELS.read_text())["labels"] if LABELS.is_file() else {}
    rows: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # found, labelled, true
    unlabelled = []
    for f in findings():
        repo, k = key(f)
        level = "warning/error" if f["severity"] in ("warning", "error") else f["severity"]
        if level == "hint":
            continue
        row = rows[repo, f["code"], level]
        row[0] += 1
        if k in labels:
            row[1] += 1
            row[2] += bool(labels[k][0])
        else:
            unlabelled.append(f"{k} {f['severity']} {f['message'][:160]}")
    print("| repository | code | severity | findings | labelled | right | precision |")
    print("|---|---|---|---:|---:|---:|---:|")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for (repo, code, level), (found, labelled, right) in sorted(rows.items()):
        precision = f"{right / labelled:.2f}" if labelled else "—"
        print(f"| {repo} | {code} | {level} | {found} | {labelled} | {right} | {precision} |")
        for t in (totals[level], totals[f"{repo} {level}"]):
            t[0], t[1], t[2] = t[0] + found, t[1] + labelled, t[2] + right
    for name, (found, labelled, right) in sorted(totals.items()):
        precision = f"{right / labelled:.2f}" if labelled else "—"
        print(f"| **{name}** | all | | {found} | {labelled} | {right} | {precision} |")
    if show_unlabelled:
        print("\nunlabelled:\n" + "\n".join(unlabelled))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("fetch", "score"))
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--unlabelled", action="store_true")
    args = parser.parse_args(argv)
    return fetch(args.mirror_root) if args.command == "fetch" else score(args.unlabelled)


if __name__ == "__main__":
    raise SystemExit(main())
