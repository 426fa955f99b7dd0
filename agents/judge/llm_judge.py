"""The optional LLM Judge: the same `Verdict`, asked of the Coder's endpoint with a JSON-schema reply.

The rule-based verdict goes into the prompt and is the fallback: a reply that is not valid JSON of the schema,
or names a method the loop does not know, leaves the deterministic verdict in place (with the reason).
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace

from cudalens.agents.coder.client import CoderClient, CoderError
from cudalens.agents.coder.prompts import judge_messages
from cudalens.agents.evaluation import known_speedup
from cudalens.agents.judge import judge
from cudalens.agents.judge.inputs import JudgeInput
from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.verdict import Evidence, Verdict

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "status",
        "summary",
        "critical_issue",
        "why_it_matters",
        "fix_hint",
        "bottleneck",
        "method",
        "plan",
        "evidence",
    ],
    "properties": {
        "status": {"enum": ["failing", "measured", "predicted"]},
        "summary": {"type": "string"},
        "critical_issue": {"type": "string"},
        "why_it_matters": {"type": "string"},
        "fix_hint": {"type": "string"},
        "bottleneck": {"enum": ["memory", "compute", "latency", "occupancy", "unknown", None]},
        "method": {"enum": [*METHODS, None]},
        "plan": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "evidence": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["metric", "value", "meaning", "line"],
                "properties": {
                    "metric": {"type": "string"},
                    "value": {"type": ["number", "string"]},
                    "meaning": {"type": "string"},
                    "line": {"type": ["integer", "null"]},
                },
            },
        },
    },
}


def _facts(inp: JudgeInput) -> dict:
    facts: dict = {"kernel": inp.kernel}
    if inp.compile is not None:
        facts["compiled"] = inp.compile.ok
        if not inp.compile.ok:
            facts["compiler_log"] = inp.compile.log[-3000:]
    if inp.correctness is not None:
        facts["correctness"] = {"status": inp.correctness.status, "message": inp.correctness.message}
    if (speedup := known_speedup(inp.timing)) is not None:
        facts["speedup_vs_pytorch"] = round(speedup, 3)
    if inp.metrics is not None:
        facts["ncu_metrics"] = dict(inp.metrics.metrics)
    facts["static_findings"] = [f"{f.code} line {f.span.line}: {f.message}" for f in inp.findings][:20]
    return facts


def llm_judge(
    client: CoderClient, inp: JudgeInput, source: str, cancel: threading.Event | None = None
) -> tuple[Verdict, str]:
    """The LLM's verdict (source "llm"), or the rule-based one and why the LLM's was not used."""
    rules = judge(inp)
    fmt = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": SCHEMA}}
    try:
        reply = client.complete(
            judge_messages(inp.gpu, source, _facts(inp), rules), cancel=cancel, response_format=fmt
        )
    except CoderError as exc:
        return rules, str(exc)
    text = reply.text.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1]
    try:
        data = json.loads(text)
        method = data.get("method")
        if method is not None and method not in METHODS:
            return rules, f"the LLM Judge named an unknown method {method!r}"
        verdict = Verdict(
            kernel=inp.kernel,
            status=data["status"],
            summary=str(data["summary"]),
            critical_issue=data.get("critical_issue", ""),
            why_it_matters=data.get("why_it_matters", ""),
            fix_hint=data.get("fix_hint", ""),
            bottleneck=data.get("bottleneck"),
            method=method,
            method_title=METHODS[method].title if method else "",
            plan=tuple(data.get("plan") or (METHODS[method].plan if method else ())),
            evidence=tuple(
                Evidence(e["metric"], e["value"], e["meaning"], e.get("line"))
                for e in data.get("evidence", ())[:4]
            ),
            source="llm",
        )
    except (ValueError, KeyError, TypeError) as exc:
        return rules, f"the LLM Judge's reply is not a verdict: {exc}"
    if rules.status == "failing" and verdict.status != "failing":
        return rules, "the LLM Judge called a failing kernel correct"
    return replace(verdict, speedup=rules.speedup), ""
