"""The report as one self-contained HTML page: styles and charts inline, no script, nothing fetched."""

from __future__ import annotations

import html
from collections import defaultdict

from cudalens.agents.report import charts
from cudalens.agents.report.data import ReportData, Table

# per-line counters (agents/profiler_evaluator.profile_metrics) → the heat strip's columns
STRIPS = (
    ("excess_sectors", "excess global sectors"),
    ("bank_conflict_wavefronts", "bank-conflict wavefronts"),
    ("thread_inst_lost", "idle thread slots"),
)

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d1d1f; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; } td, th { padding: 3px 8px; text-align: left; vertical-align: top; }
tr + tr td { border-top: 1px solid #eee; } .muted { color: #777; } .chart svg { max-width: 100%; height: auto; }
.source td { padding: 0 6px; font: 12px/1.35 ui-monospace, monospace; white-space: pre; border: 0; }
.source td.heat { width: 14px; padding: 0; } .source td.num { color: #999; text-align: right; }
.badge { padding: 1px 6px; border-radius: 8px; background: #eef; font-size: 12px; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def render(data: ReportData) -> str:
    # a page of tables alone (a whole model's) draws no roofline: it has no kernel of its own to place
    kernels = bool(data.points or data.rounds or data.verdicts or data.source or not data.tables)
    parts = [f"<h1>{_e(data.title)}</h1>"]
    if kernels:
        drawn = f"Peaks of the {data.gpu.describe()}" + (f" — {data.gpu_why}" if data.gpu_why else "")
        parts.append(f'<p class="muted" id="gpu">{_e(drawn)}</p>')
    parts += [f'<p class="muted">{_e(n)}</p>' for n in data.notes]
    parts += [_table(table) for table in data.tables]
    if kernels:
        parts.append(_roofline(data))
    if data.rounds:
        parts.append(_history(data))
    if kernels:
        parts.append(_verdicts(data))
    if data.source:
        parts.append(_source(data))
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_e(data.title)} — cudalens report</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _table(table: Table) -> str:
    out = [f'<h2 id="{_e(table.anchor)}">{_e(table.title)}</h2><table>',
           "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in table.header) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in table.rows]
    out.append("</table>")
    out += [f'<p class="muted">{_e(n)}</p>' for n in table.notes]
    return "\n".join(out)


def _roofline(data: ReportData) -> str:
    out = ['<h2 id="roofline">Roofline</h2>']
    if not data.points:
        return out[0] + '<p class="muted">No measured point (no Nsight Compute profile).</p>'
    if charts.available():
        out.append(f'<div class="chart" id="roofline-chart">{charts.roofline_svg(data.points)}</div>')
    else:
        out.append(f'<p class="muted">{_e(charts.INSTALL)}</p>')
    out.append("<table><tr><th>kernel</th><th>where</th></tr>")
    out += [f"<tr><td>{_e(p.label)}</td><td>{_e(p.roofline.summary())}</td></tr>" for p in data.points]
    return "\n".join(out) + "</table>"


def _history(data: ReportData) -> str:
    out = ['<h2 id="history">Optimize history</h2>']
    if charts.available():
        out.append(f'<div class="chart" id="history-chart">{charts.history_svg(data.rounds)}</div>')
    total_tokens = sum(r.tokens for r in data.rounds)
    total_cost = sum(r.cost_usd for r in data.rounds)
    out.append(f'<p>{len(data.rounds)} rounds, {total_tokens} tokens, ${total_cost:.4f}</p>')
    out.append("<table><tr><th>round</th><th>kind</th><th>status</th><th>speedup</th><th>tokens</th>"
               "<th>$</th><th>verdict</th></tr>")
    for r in data.rounds:
        speed = f"{r.speedup:.2f}×" if r.speedup else ""
        out.append(f"<tr><td>{r.index}</td><td>{_e(r.kind)}</td><td>{_e(r.status)}</td><td>{speed}</td>"
                   f"<td>{r.tokens}</td><td>{r.cost_usd:.4f}</td><td>{_e(r.verdict)}</td></tr>")
    return "\n".join(out) + "</table>"


def _verdicts(data: ReportData) -> str:
    out = ['<h2 id="verdicts">Judge verdicts</h2><table><tr><th>kernel</th><th>verdict</th><th>evidence</th></tr>']
    for kv in data.verdicts:
        v = kv.verdict
        head = f'<span class="badge">{_e(v.status)}</span> {_e(v.summary)}'
        if v.method_title:
            head += f"<br><b>Next:</b> {_e(v.method_title)}" + "".join(f"<br>{i}. {_e(s)}" for i, s in enumerate(v.plan, 1))
        if v.roofline:
            head += f'<br><span class="muted">{_e(v.roofline)}</span>'
        if kv.features is not None:
            head += f'<br><span class="muted">features: {_e(kv.features.summary())}</span>'
        evidence = "<br>".join(
            f"{_e(e.shown())}: {_e(e.meaning)}" + (f" (line {e.line})" if e.line else "") for e in v.evidence
        )
        out.append(f"<tr><td>{_e(kv.label)}</td><td>{head}</td><td>{evidence}</td></tr>")
    return "\n".join(out) + "</table>"


def _source(data: ReportData) -> str:
    by_line: dict[str, dict[int, float]] = defaultdict(dict)
    for c in data.lines:
        by_line[c.metric][c.line] = by_line[c.metric].get(c.line, 0.0) + c.value
    strips = [(key, label) for key, label in STRIPS if any(by_line[key].values())]
    source = data.source.splitlines()
    colors = {key: charts.heat_colors([by_line[key].get(i, 0.0) for i in range(1, len(source) + 1)])
              for key, _ in strips} if charts.available() else {}
    legend = ", ".join(label for _, label in strips) or "no per-line counters (not profiled)"
    out = [f'<h2 id="source">Source: {_e(data.source_name)}</h2><p class="muted">heat strip: {_e(legend)}</p>',
           '<table class="source">']
    for i, text in enumerate(source, 1):
        cells = "".join(
            f'<td class="heat" style="background:{colors[key][i - 1]}" '
            f'title="{_e(label)}: {by_line[key].get(i, 0.0):.4g}"></td>'
            for key, label in strips if key in colors
        )
        out.append(f'<tr>{cells}<td class="num">{i}</td><td>{_e(text)}</td></tr>')
    return "\n".join(out) + "</table>"
