"""The library corpus (issue 35): CUDA from public repositories the analyzer was never tuned on, with every
warning/error finding labelled by reading the kernel and its launches.

    python benchmarks/accuracy/library_corpus.py fetch [--mirror-root /work/.mirror]
    python benchmarks/accuracy/library_corpus.py score [--unlabelled]

`fetch` copies the files `libraries.json` lists, byte for byte at the pinned commits, into the git-ignored
`benchmarks/accuracy/libraries/owner+name/path` (never committed: only the list and the labels are). An entry
with `archive` instead of `paths` names a JSON file of generated solutions (CUDA-L1's `codes/*.json`: level →
[{task_id, custom_code}]); each solution that holds a `__global__` kernel becomes `<archive minus .json>/
<level>_<task_id>.py`, the Python file with its inline CUDA as the generator wrote it.
`score` runs `cudalens check --format json` on that folder as a user would and prints, per repository and per
code, the findings and the precision of those `library_labels.json` labels (key `owner/name:path:line:code`,
value `[true|false, "the reason"]`), then the totals per set (each entry's `set`: which corpus it belongs to,
hand-written or LLM-written, and whether the rules were tuned on it); `--unlabelled` lists the findings nobody
has labelled yet.
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


def archive_files(archive_path: str, text: str) -> dict[str, str]:
    """path → source of every generated solution in an archive that holds a `__global__` kernel."""
    stem = archive_path.removesuffix(".json")
    files = {}
    for level, solutions in json.loads(text).items():
        for solution in solutions:
            code = solution.get("custom_code") or ""
            if "__global__" in code:
                files[f"{stem}/{level}_{solution['task_id']}.py"] = code
    return files


def entry_files(entry: dict, mirror_root: Path | None) -> dict[str, str]:
    """path → verbatim text of every file one `libraries.json` entry stands for."""
    if "archive" in entry:
        return archive_files(entry["archive"], read_source(entry["repo"], entry["commit"], entry["archive"],
                                                           mirror_root))
    return {path: read_source(entry["repo"], entry["commit"], path, mirror_root) for path in entry["paths"]}


def fetch(mirror_root: Path | None) -> int:
    count = 0
    for entry in json.loads(MANIFEST.read_text())["repos"]:
        for path, text in entry_files(entry, mirror_root).items():
            target = OUT / entry["repo"].replace("/", "+") / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
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
    sets = {entry["repo"]: entry["set"] for entry in json.loads(MANIFEST.read_text())["repos"]}
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
        for t in (totals[f"{sets[repo]}: {level}"], totals[f"{repo} {level}"]):
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
