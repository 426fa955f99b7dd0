"""The report's charts, drawn by matplotlib offline into SVG text that the page inlines.

Text stays text (`svg.fonttype = none`), so kernel names are searchable and selectable in the page; the SVG
carries no date and stable ids, so the same data gives the same bytes.
"""

from __future__ import annotations

import functools
import io
import math
import re
from collections.abc import Sequence

from cudalens.agents.report.data import Point, Round

INSTALL = "charts need matplotlib: pip install 'cudalens[report]'"


@functools.cache
def _mpl():
    """matplotlib, imported when a chart is first drawn (≈ 0.7 s: the server imports this module at start), or
    None when the `report` extra is not installed."""
    try:
        import matplotlib
        import matplotlib.figure
    except ImportError:
        return None
    return matplotlib


def available() -> bool:
    return _mpl() is not None


STYLE = {"svg.fonttype": "none", "svg.hashsalt": "cudalens", "font.size": 9}


def _svg(fig) -> str:
    buffer = io.StringIO()
    with _mpl().rc_context(STYLE):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # the XML prolog and doctype are not allowed inside HTML
    return re.sub(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"', r'\1 width="100%"', text, count=1)


def roofline_svg(points: Sequence[Point]) -> str:
    """Log-log roofline: the DRAM roof, every compute roof of the GPU, one labelled point per kernel."""
    with _mpl().rc_context(STYLE):
        return _svg(_roofline_figure(points))


def _roofline_figure(points: Sequence[Point]):
    fig = _mpl().figure.Figure(figsize=(7.5, 4.6))
    ax = fig.add_subplot()
    first = points[0].roofline
    intensities = [p.roofline.point.intensity for p in points if p.roofline.point.intensity]
    lo = min([*intensities, first.ridge]) / 20
    hi = max([*intensities, first.ridge]) * 20
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    bandwidth = first.memory.value
    for ceiling in sorted(first.ceilings, key=lambda c: c.value):
        ax.plot(xs, [min(ceiling.value, x * bandwidth) for x in xs], lw=1.2,
                label=f"{ceiling.label} {ceiling.value / 1e12:.4g} TFLOP/s")
    ax.plot(xs, [x * bandwidth for x in xs], ls=":", color="grey", lw=0.8,
            label=f"DRAM {bandwidth / 1e12:.3g} TB/s")
    for i, p in enumerate(points):
        ai = p.roofline.point.intensity or hi
        y = max(p.roofline.point.flops_per_s, 1.0)
        ax.scatter([ai], [y], s=90 if p.best else 30, marker="*" if p.best else "o", zorder=3)
        # alternate above and below, so neighbouring candidates' names do not print over each other
        ax.annotate(p.label, (ai, y), textcoords="offset points", xytext=(6, 5 if i % 2 == 0 else -11), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    top = max(c.value for c in first.ceilings)
    bottom = min([top / 1e4, *(max(p.roofline.point.flops_per_s, 1.0) / 3 for p in points)])
    ax.set_ylim(bottom, top * 3)
    ax.set_xlabel("arithmetic intensity [FLOP / DRAM byte]")
    ax.set_ylabel("performance [FLOP/s]")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def history_svg(rounds: Sequence[Round]) -> str:
    """Speedup per round (bars; grey: no correct candidate) above tokens per round and the dollars so far."""
    with _mpl().rc_context(STYLE):
        return _svg(_history_figure(rounds))


def _history_figure(rounds: Sequence[Round]):
    fig = _mpl().figure.Figure(figsize=(7.5, 4.2))
    speed_ax, cost_ax = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    xs = [r.index for r in rounds]
    speeds = [r.speedup or 0.0 for r in rounds]
    colors = ["#3b7dd8" if r.speedup else "#c8c8c8" for r in rounds]
    speed_ax.bar(xs, speeds, color=colors)
    speed_ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    for r in rounds:
        label = f"{r.speedup:.2f}×" if r.speedup else r.status
        speed_ax.annotate(label, (r.index, r.speedup or 0.0), textcoords="offset points", xytext=(0, 3),
                          ha="center", fontsize=7)
    speed_ax.set_ylabel("speedup vs PyTorch")
    cost_ax.bar(xs, [r.tokens for r in rounds], color="#8fb3e6")
    cost_ax.set_ylabel("tokens")
    dollars = cost_ax.twinx()
    dollars.plot(xs, _cumulative([r.cost_usd for r in rounds]), color="#d8663b", marker="o", ms=3)
    dollars.set_ylabel("total $")
    cost_ax.set_xlabel("round")
    cost_ax.set_xticks(xs)
    return fig


def _cumulative(values: Sequence[float]) -> list[float]:
    out, total = [], 0.0
    for v in values:
        total += v if math.isfinite(v) else 0.0
        out.append(total)
    return out


def heat_colors(values: Sequence[float]) -> list[str]:
    """A CSS colour per value, from matplotlib's `YlOrRd` scaled to the largest (transparent for zero)."""
    top = max(values, default=0.0)
    cmap = _mpl().colormaps["YlOrRd"]
    out = []
    for v in values:
        if not top or v <= 0:
            out.append("transparent")
            continue
        r, g, b, _ = cmap(0.15 + 0.85 * v / top)
        out.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return out
