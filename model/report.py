"""A whole model's report page: what `cudalens model --integrate` measured and decided, read back from the
problems' folder (verify.RESULT) — the model before and after in each mode, each kernel against the op it
replaces and why it was or was not swapped, the calls it ran for, and where the integration's time went."""

from __future__ import annotations

from pathlib import Path

from cudalens.agents.gpu_specs import DEFAULT_GPU
from cudalens.agents.report import ReportData, Table
from cudalens.model.verify import (
    RESULT,
    WHOLE_MODEL_HEADER,
    Integration,
    load_result,
    model_rows,
    op_alone,
    outputs,
    swap_cost,
)


def is_model_folder(folder: Path) -> bool:
    return (folder / RESULT).is_file()


def load(folder: Path) -> ReportData:
    """The page's data from `folder` (`.cudalens/model/STEM`); ModelError where its result is unreadable."""
    model, result = load_result(folder)
    data = ReportData(f"Whole model: {Path(model).name}", DEFAULT_GPU)
    data.notes.append(f"{model}: the last `cudalens model --integrate` over {folder}")
    data.tables += [t for t in (_whole_model(result), _kernels(result), _calls(result), _seconds(result)) if t.rows]
    if result.module is None:
        data.notes.append("no kernel passed its test: nothing was integrated")
    return data


def _whole_model(result: Integration) -> Table:
    notes = [f"outputs, {label}: {outputs(checks)}"
             for label, checks in (("eager", result.checks), ("torch.compile", result.compiled_checks)) if checks]
    cost = swap_cost(result)
    return Table("whole-model", "The whole model, before and after", WHOLE_MODEL_HEADER,
                 tuple(model_rows(result)), tuple(filter(None, (cost, *notes))))


def _kernels(result: Integration) -> Table:
    rows = []
    for t in result.tests:
        decided = {d.mode.value: d.reason for d in t.decisions} if t.passed else {}
        rows.append((t.candidate.candidate.name, t.candidate.op, "passed" if t.passed else t.message,
                     op_alone(t.timing) if t.timing else "", decided.get("eager", ""), decided.get("compiled", "")))
    return Table("kernels", "Each kernel against the op it replaces",
                 ("kernel", "op", "test", "the op alone", "eager", "torch.compile"), tuple(rows))


def _calls(result: Integration) -> Table:
    rows = tuple((k.name, str(k.hits), str(k.fallbacks)) for k in result.kernels)
    notes = (f"torch.compile: {result.replaced} call(s) of the compiled graph replaced by a kernel",) \
        if "compiled" in (result.timings or {}) else ()
    return Table("calls", "Calls in the eager comparison",
                 ("kernel", "calls it ran for", "calls of other shapes, run by the original"), rows, notes)


def _seconds(result: Integration) -> Table:
    return Table("time", "Where the integration's time went", ("stage", "seconds"),
                 tuple((stage, f"{s:.1f}") for stage, s in result.seconds))
