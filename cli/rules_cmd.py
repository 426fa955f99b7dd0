"""`cudalens rules` (every code, one a line) and `cudalens rule CODE` (one rule's documentation), from the
registry in `cudalens.analysis.codes`."""

from __future__ import annotations

import argparse
import json

from cudalens.analysis.codes import all_rules, rule_info
from cudalens.analysis.rule_base import RuleInfo
from cudalens.cli.main import UsageError


def rule_json(info: RuleInfo) -> dict:
    return {
        "code": info.code,
        "name": info.name,
        "summary": info.summary,
        "severity": info.severity.value,
        "fixable": info.fixable,
        "since": info.since,
        "status": info.status,
        "source": info.source,
        "doc": info.doc,
    }


def rules_table(rules: list[RuleInfo]) -> str:
    header = ("CODE", "NAME", "SEVERITY", "FIX", "SUMMARY")
    rows = [(r.code, r.name, r.severity.value, "yes" if r.fixable else "", r.summary) for r in rules]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in [header, *rows]
    ]
    return "".join(line.rstrip() + "\n" for line in lines)


def _format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


class ListRules:
    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        _format_argument(parser)

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        rules = all_rules()
        if args.format == "json":
            print(json.dumps([rule_json(r) for r in rules], indent=2))
        else:
            print(rules_table(rules), end="")
        return 0


class ShowRule:
    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("code", metavar="CODE", help="a rule code (CL301) or name (shared-bank-conflict)")
        _format_argument(parser)

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        info = rule_info(args.code)
        if info is None:
            raise UsageError(f"unknown rule '{args.code}' (`cudalens rules` lists them)")
        if args.format == "json":
            print(json.dumps(rule_json(info), indent=2))
            return 0
        fix = "a fix is available" if info.fixable else "no automatic fix"
        print(f"# {info.name} ({info.code})\n")
        print(f"Severity: {info.severity.value} · {fix} · {info.status} since {info.since}\n")
        print(info.doc)
        return 0
