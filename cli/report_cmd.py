"""`cudalens report RUN_DIR|MODEL_DIR|FILE [--out PAGE.html] [--profile] [--gpu NAME]`: one self-contained HTML
page with the roofline (each kernel and each optimize candidate a point), the optimize run's history (speedup,
tokens, dollars per round), the Judge's verdicts and the source with its per-line counters as a heat strip; for
a whole model's folder (`cudalens model --integrate`'s, `.cudalens/model/STEM`), the model before and after in
each mode and each kernel's swap decision (model/report.py). Prints the
page's path (what Neovim and the terminal open); exit 0, or 2 with one line when the target is not a run or a
kernel file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudalens.agents.gpu_specs import DEFAULT_GPU, named_peaks
from cudalens.workspace.state import ignored, report_page


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="an optimize run's folder (.cudalens/runs/...), a whole model's folder "
                        "(.cudalens/model/STEM, after `cudalens model --integrate`) or a .cu/.py kernel file")
    parser.add_argument("--out", help="where to write the page (default: report.html in the run folder; for a "
                        "file .cudalens/reports/PATH.report.html of its project, PATH the file's path there)")
    parser.add_argument("--profile", action="store_true", help="for a FILE: profile it with Nsight Compute first")
    parser.add_argument("--gpu", help="the GPU whose peaks draw the roofs (default: the H200's; with --profile, "
                        "this machine's); the page says which and why")


def default_out(target: Path) -> Path:
    """A run's page goes into the run's folder; a file's into `.cudalens/reports/` of its project (git-ignored:
    workspace/state.py), never beside the file, where it would show up as a new file to commit."""
    return target / "report.html" if target.is_dir() else report_page(target)


def run(args: argparse.Namespace) -> int:
    from cudalens.agents.gpu_specs import peaks_of
    from cudalens.agents.report import ReportError, write_page, write_report
    from cudalens.model.profile import ModelError
    from cudalens.model.report import is_model_folder
    from cudalens.model.report import load as load_model
    from cudalens.profiler.gpu_specs import detect_gpu

    target = Path(args.target)
    if args.gpu:
        gpu, why = named_peaks(args.gpu)
    elif args.profile:
        gpu, why = peaks_of(detect_gpu())
    else:
        gpu, why = DEFAULT_GPU, "the default, not this machine's: --gpu NAME for another, --profile for this machine's"
    try:
        out = ignored(Path(args.out) if args.out else default_out(target))
        if is_model_folder(target):
            path = write_page(load_model(target), out)
        else:
            path = write_report(target, out, gpu, args.profile, gpu_why=why)
    except (ReportError, ModelError, OSError) as exc:
        print(f"cudalens report: {exc}", file=sys.stderr)
        return 2
    print(path.resolve())
    return 0
