"""Predicted verdicts for analysed documents (hover, CL910) and "Ask Coder about this"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.agents.coder.ask import ask_coder
from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.judge import judge, judge_input
from cudalens.agents.judge.render import render_markdown, verdict_findings
from cudalens.analysis.api import analyze_text
from tests.agents.fake_openai import FakeOpenAI, reply

FIXTURE = Path(__file__).parent.parent / "analysis" / "fixtures" / "CL1_coalescing.cu"


@pytest.fixture
def client_for(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("API_TEST_KEY", "sk-api-test")

    def make(fake: FakeOpenAI) -> CoderClient:
        return CoderClient(CoderSettings(base_url=fake.base_url, model="m", api_key_env="API_TEST_KEY"))

    return make


def test_predicted_verdicts_for_an_analysed_file() -> None:
    report = analyze_text(str(FIXTURE), FIXTURE.read_text())
    verdicts = {
        k.name: judge(judge_input(None, k.name, tuple(f for f in report.findings if f.kernel == k.name), k))
        for k in report.kernels
    }
    assert verdicts["transpose_naive"].method == "coalesce-global-access"
    assert verdicts["transpose_naive"].evidence[0].line == 26
    assert verdicts["copy_ok"].method != "coalesce-global-access"
    assert all(v.predicted for v in verdicts.values())
    assert "predicted" in render_markdown(verdicts["stride2"])

    span = next(k.name_span for k in report.kernels if k.name == "transpose_naive")
    (finding,) = verdict_findings(verdicts["transpose_naive"], report.path, span)
    assert finding.code == "CL910" and finding.span.line == 22 and "coalesce" in finding.message.lower()


def test_ask_coder_returns_one_suggestion(client_for) -> None:
    text = (
        "The loads stride by `height`. Read a tile row-wise into shared memory.\n\n"
        "```cuda\n__shared__ float tile[32][33];\n```\n"
    )
    with FakeOpenAI([reply(text)]) as fake:
        s = ask_coder(
            client_for(fake),
            "CL101 uncoalesced global access",
            "out[x * height + y] = in[IDX(y, x)];",
            "k.cu",
            26,
        )
    assert s.explanation.startswith("The loads stride") and s.code == "__shared__ float tile[32][33];\n"
    assert "lines 26-26 of k.cu" in fake.requests[0].prompt and s.usage.requests == 1


def test_ask_coder_explains_with_the_prose_before_and_after_its_code(client_for) -> None:
    """The reply's words on both sides of the code block are the explanation; the code is not in it."""
    text = (
        "The loads stride by `height`.\n\n"
        "```cuda\n__shared__ float tile[32][33];\n```\n\n"
        "The 33rd column keeps the tile's column reads free of bank conflicts.\n"
    )
    with FakeOpenAI([reply(text)]) as fake:
        s = ask_coder(client_for(fake), "CL101", "out[x] = in[y];\n", "k.cu", 26)
    assert s.explanation == ("The loads stride by `height`.\n\n"
                             "The 33rd column keeps the tile's column reads free of bank conflicts.")
    assert s.code == "__shared__ float tile[32][33];\n"


def test_ask_coder_without_words_has_no_explanation_rather_than_its_code(client_for) -> None:
    with FakeOpenAI([reply("```cuda\n__shared__ float tile[32][33];\n```\n")]) as fake:
        s = ask_coder(client_for(fake), "CL101", "out[x] = in[y];\n", "k.cu", 26)
    assert s.explanation == "" and s.code == "__shared__ float tile[32][33];\n"


def test_ask_coder_names_the_lines_it_shows(client_for) -> None:
    """Lines 10 to 23 are 14 lines, each with its line end, as the server sends them: "lines 10-23"."""
    code = "".join(f"line {n};\n" for n in range(10, 24))
    with FakeOpenAI([reply("No change.")]) as fake:
        ask_coder(client_for(fake), "CL101", code, "k.cu", 10)
        ask_coder(client_for(fake), "CL101", code.rstrip("\n"), "k.cu", 10)  # without the last line end
    assert ["lines 10-23 of k.cu" in r.prompt for r in fake.requests] == [True, True]
