"""`cudalens rules`, `cudalens rule CODE`, the documentation every rule must carry, and the subcommand table."""

from __future__ import annotations

import json
import re

import pytest

from cudalens.analysis.codes import all_rules
from cudalens.analysis.rule_base import DOC_HEADINGS
from cudalens.cli.main import COMMANDS, Command, _load

RULES = all_rules()


def headings(doc: str) -> list[str]:
    return [m[1].strip() for m in re.finditer(r"^#+\s+(.+)$", doc, flags=re.MULTILINE)]


@pytest.mark.parametrize("info", RULES, ids=[r.code for r in RULES])
def test_every_rule_documents_all_seven_headings_in_order(info):
    found = [h for h in headings(info.doc) if h in DOC_HEADINGS]
    assert found == list(DOC_HEADINGS), f"{info.code} documents {found}"


@pytest.mark.parametrize("info", RULES, ids=[r.code for r in RULES])
def test_every_rule_has_a_code_name_and_summary(info):
    assert re.fullmatch(r"CL\d{3}", info.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", info.name)
    assert info.summary and "\n" not in info.summary


def test_codes_and_names_are_unique():
    assert len({r.code for r in RULES}) == len(RULES) == len({r.name for r in RULES})


def test_rules_lists_every_registered_rule(cli, tmp_path):
    result = cli("rules", cwd=tmp_path)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    assert [line.split()[0] for line in lines[1:]] == [r.code for r in RULES]


def test_rules_as_json(cli, tmp_path):
    data = json.loads(cli("rules", "--format", "json", cwd=tmp_path).out)
    assert [(d["code"], d["name"], d["severity"], d["fixable"]) for d in data] == [
        (r.code, r.name, r.severity.value, r.fixable) for r in RULES
    ]


@pytest.mark.parametrize("info", RULES, ids=[r.code for r in RULES])
def test_rule_prints_its_documentation_by_code_or_name(cli, tmp_path, info):
    by_code = cli("rule", info.code.lower(), cwd=tmp_path)
    assert by_code.code == 0 and by_code.out.startswith(f"# {info.name} ({info.code})\n")
    assert info.doc in by_code.out
    assert cli("rule", info.name, cwd=tmp_path).out == by_code.out


def test_unknown_rule_is_a_usage_error(cli, tmp_path):
    result = cli("rule", "CL000", cwd=tmp_path)
    assert (
        result.code == 2
        and result.err == "cudalens: error: unknown rule 'CL000' (`cudalens rules` lists them)\n"
    )


def test_every_command_in_the_table_loads():
    for command in COMMANDS:
        assert callable(_load(command).run), command.name


def test_a_plugin_can_be_a_module_an_object_or_a_function():
    assert _load(Command("check", "cudalens.cli.check", "")).add_arguments is not None
    assert _load(Command("rules", "cudalens.cli.rules_cmd:ListRules", "")).run is not None
    # a plain function is the run step; its module's add_arguments, if any, declares the options
    function = _load(Command("x", "cudalens.cli.check:run", ""))
    assert function.run.__name__ == "run" and function.add_arguments.__module__ == "cudalens.cli.check"
