"""The library corpus (issue 35): CUDA from public repositories the analyzer was never tuned on, with every
warning/error finding labelled by reading the kernel and its launches.

    python benchmarks/accuracy/library_corpus.py fetch [--mirror-root /work/.mirror]
    python benchmarks/accuracy/library_corpus.py score [--unlabelled] [--races]

`fetch` copies the files `libraries.json` lists, byte for byte at the pinned commits, into the git-ignored
`benchmarks/accuracy/libraries/owner+name/path` (never committed: only the list and the labels are). An entry
with `archive` instead of `paths` names a JSON file of generated solutions (CUDA-L1's `codes/*.json`: level →
[{task_id, custom_code}]); each solution that holds a `__global__` kernel becomes `<archive minus .json>/
<level>_<task_id>.py`, the Python file with its inline CUDA as the generator wrote it.
An entry with `tree` takes files from the whole repository at the commit (the mirror's `git archive`, else
GitHub's tarball): `generate` runs the suite's own generator there first (`commands`, each run in `cwd` with the
standard library's Python and nothing of our environment; `configure` edits the generator's options file, each
`[old, new]` replaced once), then `keep` (a glob under the tree) picks the files and `select` (a regular
expression on the file name) narrows them; `beside` names headers (globs) copied next to every kept file, where
an `#include "x.h"` finds them as the suite's own build (`-I`) does. Nothing else is changed. An entry's
`config` is the `[tool.cudalens]` table its user would write (`include-dirs = ["cpp/include"]` where the code
includes `<cuml/common/utils.hpp>`): `fetch` writes it as the copy's `pyproject.toml`, which `check` reads as
it reads a project's.

`score` runs `cudalens check --format json` on that folder as a user would and prints, per repository and per
code, the findings and the precision of those `library_labels.json` labels (key `owner/name:path:line:code`,
value `[true|false, "the reason"]`; where one line has two findings of a code on different arrays and they
differ, `…:code:array` labels each, the array being the first one the message names in backquotes), then the totals per set (each entry's `set`: which corpus it belongs to,
hand-written or LLM-written, and whether the rules were tuned on it); `--unlabelled` lists the findings nobody
has labelled yet.

The race corpus (entries with `race_truth`) is scored per program against the suite's own labels, not ours: a
file's name is split at `_`, `-` and `.`, and a token listed in `race_truth` (a bug kind the suite planted)
makes it `racy` or `global` (a race on global memory: not what CL302/CL303 claim, counted apart); a file with
neither is race-free. A racy program is in scope only where it declares `__shared__` memory (a missing
`__syncwarp()` before shuffles races on nothing CL303 sees). `score --races` prints, per suite: programs, false
alarms (a CL302/CL303 at warning/error on a race-free program), info findings right/wrong, recall on the
in-scope racy programs, and lists the misses and false alarms.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
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


def export_tree(repo: str, commit: str, mirror_root: Path | None, dest: Path) -> None:
    """The repository's files at `commit` into `dest`: from the local mirror when it has the commit, else
    GitHub's tarball."""
    git_dir = None if mirror_root is None else mirror_root / repo.replace("/", "+") / "repo"
    if git_dir is not None and git_dir.exists():
        done = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
                              capture_output=True, check=False)
        if done.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
                tar.extractall(dest, filter="data")
            return
    with urllib.request.urlopen(f"https://codeload.github.com/{repo}/tar.gz/{commit}", timeout=120) as response:
        data = response.read()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        top = tar.getmembers()[0].name.split("/")[0]
        for member in tar.getmembers():
            member.name = member.name[len(top) + 1:]
        tar.extractall(dest, members=[m for m in tar.getmembers() if m.name], filter="data")


def generate(spec: dict, tree: Path) -> None:
    """Run a suite's own code generator in its exported tree, with its options file edited as `spec` says."""
    for relative, replacements in spec.get("configure", {}).items():
        options = tree / relative
        text = options.read_text()
        for old, new in replacements:
            if old not in text:
                raise SystemExit(f"library_corpus: {relative} has no {old!r} to set")
            text = text.replace(old, new, 1)
        options.write_text(text)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree), "LANG": "C.UTF-8"}
    for command in spec["commands"]:
        words = [w.replace("{python}", sys.executable) for w in command]
        cwd = tree / spec["cwd"]
        for each in sorted(str(p.relative_to(cwd)) for p in cwd.glob(spec["each"])) if "each" in spec else [""]:
            argv = [w.replace("{each}", each) for w in words]
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=600, check=False)
            if done.returncode != 0:
                raise SystemExit(f"library_corpus: {' '.join(argv)} failed: {done.stderr.strip()[-300:]}")


def tree_files(entry: dict, mirror_root: Path | None) -> dict[str, str]:
    """path → text of the files a `tree` entry keeps (generated first where it says so), with its headers
    beside each kept file."""
    spec = entry["tree"]
    with tempfile.TemporaryDirectory(prefix="cudalens-corpus-") as scratch:
        tree = Path(scratch)
        export_tree(entry["repo"], entry["commit"], mirror_root, tree)
        if "generate" in spec:
            generate(spec["generate"], tree)
        select = re.compile(spec.get("select", ""))
        kept = sorted(p for pattern in spec["keep"] for p in tree.glob(pattern)
                      if p.is_file() and select.search(p.name))
        files = {str(p.relative_to(tree)): p.read_text(errors="surrogateescape") for p in kept}
        headers = [p for pattern in spec.get("beside", []) for p in tree.glob(pattern) if p.is_file()]
        for folder in sorted({str(Path(path).parent) for path in files}):
            for header in headers:
                files.setdefault(f"{folder}/{header.name}", header.read_text(errors="surrogateescape"))
    return files


def entry_files(entry: dict, mirror_root: Path | None) -> dict[str, str]:
    """path → verbatim text of every file one `libraries.json` entry stands for."""
    if "tree" in entry:
        return tree_files(entry, mirror_root)
    if "archive" in entry:
        return archive_files(entry["archive"], read_source(entry["repo"], entry["commit"], entry["archive"],
                                                           mirror_root))
    return {path: read_source(entry["repo"], entry["commit"], path, mirror_root) for path in entry["paths"]}


def project_file(config: dict) -> str:
    """A pyproject.toml whose `[tool.cudalens]` table holds `config` (strings and lists of strings: their JSON
    spelling is TOML's)."""
    return "[tool.cudalens]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in config.items())


def fetch(mirror_root: Path | None) -> int:
    count = 0
    for entry in json.loads(MANIFEST.read_text())["repos"]:
        files = entry_files(entry, mirror_root)
        if "config" in entry:
            if "pyproject.toml" in files:
                raise SystemExit(f"library_corpus: {entry['repo']} has its own pyproject.toml for `config`")
            files["pyproject.toml"] = project_file(entry["config"])
        for path, text in files.items():
            target = OUT / entry["repo"].replace("/", "+") / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, errors="surrogateescape")
            count += 1
    print(f"{count} files into {OUT}")
    return 0


def folder(repo: str) -> Path:
    return OUT / repo.replace("/", "+")


def findings(folders: list[Path], select: str = "CL") -> list[dict]:
    present = [str(f) for f in folders if f.is_dir()]
    if not present:
        return []
    done = subprocess.run([sys.executable, "-m", "cudalens", "check", "--format", "json", "--select", select,
                           *present], capture_output=True, text=True, cwd=ROOT, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"cudalens check failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)["findings"]


def key(finding: dict) -> tuple[str, str]:
    """(repository, `owner/name:path:line:code`) of a finding under OUT."""
    relative = Path(finding["path"]).resolve().relative_to(OUT.resolve())
    repo = relative.parts[0].replace("+", "/", 1)
    return repo, f"{repo}:{Path(*relative.parts[1:])}:{finding['line']}:{finding['code']}"


def label_of(labels: dict, k: str, finding: dict) -> list | None:
    """The finding's label: the one for its array where the line has one (`…:code:array`), else the line's."""
    array = re.search(r"`([^`]+)`", finding["message"])
    return (labels.get(f"{k}:{array.group(1)}") if array else None) or labels.get(k)


def score(show_unlabelled: bool) -> int:
    labels = json.loads(LABELS.read_text())["labels"] if LABELS.is_file() else {}
    entries = [e for e in json.loads(MANIFEST.read_text())["repos"] if "race_truth" not in e]
    sets = {entry["repo"]: entry["set"] for entry in entries}
    rows: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # found, labelled, true
    unlabelled = []
    for f in findings([folder(repo) for repo in sets]):
        repo, k = key(f)
        level = "warning/error" if f["severity"] in ("warning", "error") else f["severity"]
        if level == "hint":
            continue
        row = rows[repo, f["code"], level]
        row[0] += 1
        label = label_of(labels, k, f)
        if label is not None:
            row[1] += 1
            row[2] += bool(label[0])
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


RACE_CODES = ("CL302", "CL303")


def race_truth(entry: dict, path: str, text: str) -> str:
    """The suite's label of one program: `racy` (in scope: it has shared memory), `racy, no shared memory`,
    `global` (a race on global memory, out of scope) or `race-free`."""
    tokens = set(re.split(r"[_.\-]", Path(path).name))
    kinds = {entry["race_truth"][t] for t in tokens if t in entry["race_truth"]}
    if "racy" in kinds:
        return "racy" if "__shared__" in text else "racy, no shared memory"
    return "global" if "global" in kinds else "race-free"


def race_rows(entries: list[dict], found: list[dict]) -> tuple[dict, dict, list[dict]]:
    """Per suite: counts of programs and findings against the suite's labels; the programs listed by what
    went wrong (false alarm, wrong info, missed); and every program with its label and CL302/CL303 findings."""
    by_path: dict[str, list[dict]] = defaultdict(list)
    for f in found:
        if f["code"] in RACE_CODES:
            by_path[str(Path(f["path"]).resolve())].append(f)
    rows: dict[str, dict[str, int]] = {}
    listed: dict[str, list[str]] = defaultdict(list)
    programs: list[dict] = []
    for entry in entries:
        row = rows.setdefault(entry["repo"], defaultdict(int))
        base = folder(entry["repo"])
        for program in sorted(base.rglob("*")):
            if program.suffix != ".cu" or "__global__" not in (text := program.read_text(
                    errors="surrogateescape")):
                continue
            truth = race_truth(entry, program.name, text)
            mine = by_path.get(str(program.resolve()), [])
            proven = [f for f in mine if f["severity"] in ("warning", "error")]
            info = [f for f in mine if f["severity"] == "info"]
            name = f"{entry['repo']}:{program.relative_to(base)}"
            programs.append({"repo": entry["repo"], "path": str(program.relative_to(OUT)), "truth": truth,
                             "findings": [[f["line"], f["code"], f["severity"]] for f in mine]})
            row["programs"] += 1
            row[truth] += 1
            if truth == "racy":
                row["racy found W/E"] += bool(proven)
                row["racy found"] += bool(mine)
                row["info right"] += len(info)
                if not mine:
                    listed["missed"].append(name)
            elif truth == "race-free":
                row["false alarms W/E"] += bool(proven)
                row["info wrong"] += len(info)
                for f in proven:
                    listed["false alarm"].append(f"{name}:{f['line']} {f['code']} {f['message'][:140]}")
                for f in info:
                    listed["info on race-free"].append(f"{name}:{f['line']} {f['code']} {f['message'][:140]}")
            else:
                row[f"findings on {truth}"] += len(mine)
    return rows, listed, programs


def plan(programs: list[dict], rest: int) -> list[dict]:
    """The programs racecheck should see, most telling first: four canaries (racy by label and proven by us: a
    racecheck that finds nothing there is not measuring), a finding at warning/error on a race-free program,
    info on one, racy programs without a proven finding, racy ones with one, then `rest` race-free programs
    with shared memory and no finding (every suite alike)."""
    def rank(p: dict) -> int:
        proven = any(sev in ("warning", "error") for _, _, sev in p["findings"])
        if p["truth"] == "race-free":
            return 0 if proven else 1 if p["findings"] else 4
        return {"racy": 3 if proven else 2}.get(p["truth"], 5)
    ordered = sorted(programs, key=lambda p: (rank(p), p["path"]))
    canaries = [p for p in ordered if rank(p) == 3][:: max(1, sum(rank(p) == 3 for p in ordered) // 4)][:4]
    head = canaries + [p for p in ordered if rank(p) < 4 and p not in canaries]
    if not rest:
        return head
    quiet = [p for p in ordered if rank(p) == 4 and "__shared__" in (OUT / p["path"]).read_text(errors="replace")]
    return head + quiet[::max(1, len(quiet) // rest)][:rest]


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "—"


def score_races(show: bool, plan_path: Path | None = None) -> int:
    entries = [e for e in json.loads(MANIFEST.read_text())["repos"] if "race_truth" in e]
    rows, listed, programs = race_rows(entries, findings([folder(e["repo"]) for e in entries],
                                                         ",".join(RACE_CODES)))
    if plan_path is not None:
        plan_path.parent.mkdir(parents=True, exist_ok=True)
        chosen = plan(programs, rest=40)
        plan_path.write_text(json.dumps({"root": str(OUT.relative_to(ROOT)), "programs": chosen}, indent=1))
        print(f"{len(chosen)} programs planned for racecheck → {plan_path}")
    print("| suite | programs | racy (shared memory) | race-free | global / no shared (apart) | false alarms W/E "
          "| info right / wrong | recall W/E | recall all |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    total: dict[str, int] = defaultdict(int)
    for row in rows.values():
        for k, v in row.items():
            total[k] += v
    for repo, row in [*rows.items(), ("**all**", total)]:
        racy = row["racy"]
        print(f"| {repo} | {row['programs']} | {racy} | {row['race-free']} | {row['global']} / "
              f"{row['racy, no shared memory']} | {row['false alarms W/E']} | {row['info right']} / "
              f"{row['info wrong']} | {_share(row['racy found W/E'], racy)} | {_share(row['racy found'], racy)} |")
    for what, names in listed.items():
        if show or what != "missed" or len(names) <= 20:
            print(f"\n{what} ({len(names)}):\n" + "\n".join(names))
        else:
            print(f"\n{what}: {len(names)} (--unlabelled lists them)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("fetch", "score"))
    parser.add_argument("--mirror-root", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--unlabelled", action="store_true")
    parser.add_argument("--races", action="store_true", help="score the race corpus against its suites' labels")
    parser.add_argument("--plan", type=Path, help="with --races: write the programs racecheck should see "
                        "(racecheck_races.py runs them on a GPU)")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        return fetch(args.mirror_root)
    return score_races(args.unlabelled, args.plan) if args.races else score(args.unlabelled)


if __name__ == "__main__":
    raise SystemExit(main())
