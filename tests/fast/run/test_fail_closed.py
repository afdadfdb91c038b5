"""The gate fails closed: a sample an error (judge, cache, embedder, I/O) left unscored counts against the run (exit 4),
unless --max-error-rate accepts it; "not evaluated" passes only when every sample lacked the data it needs."""
from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from localragas.cli.options import EXIT_NOT_EVALUATED
from localragas.core.errors import JudgeError
from localragas.run.gate import run_gate
from localragas.judges import fake
from localragas.data.schema import MetricSummary, Report
from localragas.data.unscored import is_error_reason

from cli_helpers import cli, write_jsonl

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
ZERO = ["-t", "faithfulness=0", "-t", "context_recall=0"]


def rows(n: int, broken: set[int] = frozenset()) -> list[dict]:
    return [{"id": f"s{i}", "question": f"What colour is item {i}?",
             "contexts": [f"Item {i} is painted bright red."],
             "answer": f"Item {i} is painted bright red." + (" BROKEN" if i in broken else ""),
             "reference": f"Item {i} is bright red."} for i in range(n)]


@pytest.fixture
def breaking_judge(monkeypatch):
    """The fake judge raises a JudgeError on every call about an answer marked BROKEN."""
    real = fake.heuristic_reply

    def respond(prompt, output):
        if "BROKEN" in prompt.user:
            return JudgeError("server unreachable after 3 attempts: connection refused")
        return real(prompt, output)

    monkeypatch.setattr(fake, "heuristic_reply", respond)


def summary(metric="faithfulness", mean=0.9, scored=3, errors=0, data=0) -> MetricSummary:
    reasons = {**({"judge_error": errors} if errors else {}), **({"no_reference": data} if data else {})}
    return MetricSummary(metric=metric, mean=mean, scored=scored, unscored=errors + data, unscored_reasons=reasons,
                         errors=errors, first_error="judge_error: boom" if errors else None)


# --- the rule ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason, error", [
    ("no_reference", False), ("no_claims", False), ("no_contexts", False), ("no_retrieved_context_ids", False),
    ("judge_error: reply truncated", True), ("error: DatabaseError: malformed", True), (None, True), ("", True),
    ("something_new", True),
])
def test_data_reasons_are_no_something_and_everything_else_is_an_error(reason, error):
    assert is_error_reason(reason) is error


def test_one_errored_sample_makes_the_metric_unevaluated_by_default():
    g = run_gate([summary(errors=1)], {"faithfulness": 0.5}, {})
    assert (g.evaluated, g.passed) == (False, False)
    assert g.results[0].status == "error"
    assert g.errors[0].metric == "faithfulness" and not g.errors[0].allowed
    assert "could not evaluate: 1 of 4 sample(s) unscored by an error (25% > max error rate 0%): judge_error: boom" \
        in g.results[0].message


def test_max_error_rate_accepts_a_share_of_errored_samples():
    g = run_gate([summary(errors=1)], {"faithfulness": 0.5}, {}, max_error_rate=0.25)
    assert (g.evaluated, g.passed, g.results[0].status) == (True, True, "passed")
    assert g.errors[0].allowed and "left out of the mean" in g.errors[0].message
    g = run_gate([summary(errors=2)], {"faithfulness": 0.5}, {}, max_error_rate=0.25)
    assert (g.evaluated, g.passed) == (False, False)


def test_no_scored_sample_passes_only_when_every_sample_lacked_data():
    g = run_gate([summary(mean=None, scored=0, data=3)], {"faithfulness": 0.5}, {})
    assert (g.evaluated, g.passed, g.results[0].status) == (True, True, "not_evaluated")
    assert g.results[0].message == "faithfulness: not evaluated (no row has a reference)"  # the one field missing
    for rate in (0.0, 1.0):  # errors and no scored sample: never "not evaluated", whatever the accepted rate
        g = run_gate([summary(mean=None, scored=0, errors=1, data=2)], {"faithfulness": 0.5}, {}, max_error_rate=rate)
        assert (g.evaluated, g.passed, g.results[0].status) == (False, False, "error")


def test_a_metric_without_threshold_or_with_the_gate_off_still_counts():
    g = run_gate([summary(errors=1)], {}, {})
    assert g.results == [] and not g.evaluated and not g.passed
    g = run_gate([summary(errors=1)], {"faithfulness": 0.5}, {}, enabled=False)
    assert g.passed and not g.evaluated  # the gate is off, the run still could not evaluate


# --- the command line ----------------------------------------------------------------------------------------


def test_a_judge_error_exits_4_and_every_output_says_which_metric_and_why(tmp_path, breaking_judge):
    data = write_jsonl(tmp_path / "d.jsonl", rows(4, broken={2}))
    out, junit, html, md = (tmp_path / n for n in ("r.json", "j.xml", "r.html", "r.md"))
    r = cli("eval", data, *FAST, *ZERO, "-m", "faithfulness,context_recall", "--out", out, "--junit", junit,
            "--html", html, "--md", md)
    assert r.exit_code == EXIT_NOT_EVALUATED == 4, r.output
    assert "could not evaluate" in r.output
    assert "faithfulness: could not evaluate: 1 of 4 sample(s) unscored by an error" in r.output
    assert "server unreachable after 3 attempts" in r.output
    report = Report.model_validate_json(out.read_text())
    assert not report.gate.evaluated and not report.gate.passed
    assert [x.metric for x in report.gate.errors] == ["faithfulness"]  # context_recall asks about the reference only
    assert report.summary_for("faithfulness").errors == 1
    assert {g.metric: g.status for g in report.gate.results} == {"faithfulness": "error", "context_recall": "passed"}
    case = ET.parse(junit).getroot().find(".//testcase[@name='faithfulness']")
    assert case.find("error").get("type") == "CouldNotEvaluate"
    assert "server unreachable" in case.find("error").get("message")
    assert ET.parse(junit).getroot().get("errors") == "1"
    page = html.read_text()
    assert "Could not evaluate" in page and "server unreachable after 3 attempts" in page
    assert "could not evaluate" in md.read_text() and "server unreachable" in md.read_text()


def test_max_error_rate_flag(tmp_path, breaking_judge):
    data = write_jsonl(tmp_path / "d.jsonl", [r | {"answer": r["answer"] + " It was made in Oslo in 1990."}
                                        for r in rows(4, broken={2})])
    args = ["eval", data, *FAST, *ZERO, "-m", "faithfulness"]
    assert cli(*args, "--max-error-rate", "0.25").exit_code == 0
    assert cli(*args, "--max-error-rate", "0.2").exit_code == 4
    assert cli(*args, "--max-error-rate", "0.25", "-t", "faithfulness=1").exit_code == 1
    r = cli(*args, "--max-error-rate", "1.5")
    assert r.exit_code == 2 and "--max-error-rate" in r.output


def test_exit_4_wins_over_a_failed_gate_and_holds_with_no_gate(tmp_path, breaking_judge):
    data = write_jsonl(tmp_path / "d.jsonl", rows(3, broken={0}))
    assert cli("eval", data, *FAST, "-m", "faithfulness,context_recall", "-t", "context_recall=1").exit_code == 4
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--no-gate")
    assert r.exit_code == 4 and "quality gate: off" in r.output and "could not evaluate" in r.output


def test_report_and_merge_regate_with_the_same_rule(tmp_path, breaking_judge):
    data = write_jsonl(tmp_path / "d.jsonl", rows(4, broken={1}))
    out = tmp_path / "r.json"
    assert cli("eval", data, *FAST, *ZERO, "-m", "faithfulness", "--out", out).exit_code == 4
    assert cli("report", out).exit_code == 4
    assert cli("report", out, "--max-error-rate", "0.25").exit_code == 0
    shards = [tmp_path / f"s{i}.json" for i in (1, 2)]
    for i, s in enumerate(shards, 1):
        cli("eval", data, *FAST, *ZERO, "-m", "faithfulness", "--shard", f"{i}/2", "--out", s)
    assert cli("merge", *shards).exit_code == 4


def test_missing_data_alone_still_passes_as_not_evaluated(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [r | {"reference": None} for r in rows(2)])
    r = cli("eval", data, *FAST, "-t", "answer_relevancy=0")  # the default metrics: context_recall not named
    assert r.exit_code == 0, r.output
    assert "quality gate PASSED, not evaluated: context_recall" in r.output
    assert "context_recall: not evaluated (no row has a reference)" in r.output


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_an_unreachable_openai_server_exits_4(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rows(2))
    r = cli("eval", data, "--judge", "openai:any", "--judge-option", f"base_url=http://127.0.0.1:{closed_port()}/v1",
            "--judge-option", "retries=0", "--embedder", "fake", "--no-cache", "--no-progress")
    assert r.exit_code == 4, r.output
    assert "server unreachable" in r.output and "could not evaluate" in r.output


def test_max_error_rate_in_the_config_file(tmp_path, monkeypatch, breaking_judge):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "d.jsonl", rows(4, broken={2}))
    Path("localragas.toml").write_text("max_error_rate = 0.25\n")
    assert cli("eval", "d.jsonl", *FAST, *ZERO, "-m", "faithfulness").exit_code == 0
    assert cli("eval", "d.jsonl", *FAST, *ZERO, "-m", "faithfulness", "--max-error-rate", "0").exit_code == 4
    Path("localragas.toml").write_text("max_error_rate = 2\n")
    r = cli("eval", "d.jsonl", *FAST)
    assert r.exit_code == 2 and "max_error_rate" in r.output
