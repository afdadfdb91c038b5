"""The quality gate, threshold parsing, settings files, and the command line (fake judge, hashing embedder)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from localragas.run.config import find_config, load_settings
from localragas.run.settings import RunSettings
from localragas.core.errors import ConfigError
from localragas.run.gate import check_threshold, parse_threshold, run_gate
from localragas.metrics import all_metrics
from localragas.metrics.registry import default_metric_names
from localragas.data.schema import MetricSummary, Report

from cli_helpers import cli, write_jsonl

DEFAULT = tuple(default_metric_names())  # the four RAGAS core metrics

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
ALL_ZERO = [x for m in DEFAULT for x in ("-t", f"{m}=0")]
PROBLEMS = {n: m.problem for n, m in all_metrics().items()}


def summary(metric: str, mean: float | None, scored: int = 1) -> MetricSummary:
    return MetricSummary(metric=metric, mean=mean, scored=scored if mean is not None else 0, unscored=0)


# --- gate ------------------------------------------------------------------------------------------------------


def test_gate_passes_at_and_above_threshold():
    g = run_gate([summary("faithfulness", 0.8), summary("context_recall", 0.95)],
                 {"faithfulness": 0.8, "context_recall": 0.7}, PROBLEMS)
    assert g.enabled and g.passed
    assert [r.status for r in g.results] == ["passed", "passed"]
    assert g.results[0].message == "faithfulness 0.800 >= 0.80"


def test_gate_fails_with_a_message_naming_metric_mean_threshold_and_meaning():
    g = run_gate([summary("faithfulness", 0.5), summary("context_recall", 0.9)],
                 {"faithfulness": 0.8, "context_recall": 0.7}, PROBLEMS)
    assert g.passed is False
    failed = [r for r in g.results if r.status == "failed"]
    assert len(failed) == 1
    r = failed[0]
    assert (r.metric, r.mean, r.threshold) == ("faithfulness", 0.5, 0.8)
    assert r.message == f"faithfulness 0.500 < 0.80: {PROBLEMS['faithfulness']}"
    assert "hallucination" in r.message


def test_gate_not_evaluated_does_not_fail():
    g = run_gate([summary("faithfulness", None), summary("context_recall", 0.9)],
                 {"faithfulness": 0.8, "context_recall": 0.7}, PROBLEMS)
    assert g.passed is True
    ne = g.results[0]
    assert ne.status == "not_evaluated" and ne.mean is None
    assert "not evaluated" in ne.message


def test_gate_skips_metrics_without_threshold():
    g = run_gate([summary("faithfulness", 0.1)], {}, PROBLEMS)
    assert g.passed and g.results == []


def test_gate_disabled_always_passes_but_keeps_results():
    g = run_gate([summary("faithfulness", 0.1)], {"faithfulness": 0.8}, PROBLEMS, enabled=False)
    assert g.enabled is False and g.passed is True
    assert g.results[0].status == "failed"


def test_gate_message_without_known_problem():
    g = run_gate([summary("custom", 0.1)], {"custom": 0.5}, {})
    assert g.results[0].message.endswith(": below threshold")


def test_gate_message_shows_the_threshold_actually_used():
    g = run_gate([summary("faithfulness", 0.806)], {"faithfulness": 0.805}, PROBLEMS)
    assert g.results[0].status == "passed"
    assert "0.805" in g.results[0].message


@pytest.mark.parametrize("text, expected", [
    ("faithfulness=0.85", ("faithfulness", 0.85)),
    (" context_recall = 0.7 ", ("context_recall", 0.7)),
    ("answer_relevancy=0", ("answer_relevancy", 0.0)),
    ("context_precision=1", ("context_precision", 1.0)),
])
def test_parse_threshold(text, expected):
    assert parse_threshold(text) == expected


@pytest.mark.parametrize("text, fragment", [
    ("faithfulness", "METRIC=VALUE"),
    ("faithfulness=high", "must be a number"),
    ("faithfulness=", "must be a number"),
    ("faithfulness=1.5", "in [0, 1]"),
    ("faithfulness=-0.1", "in [0, 1]"),
    ("faithfulness=nan", "in [0, 1]"),
])
def test_parse_threshold_errors(text, fragment):
    with pytest.raises(ConfigError) as e:
        parse_threshold(text)
    assert fragment in str(e.value)
    assert "faithfulness" in str(e.value)


def test_check_threshold_accepts_numbers_and_numeric_strings():
    assert check_threshold("x", 1) == 1.0
    assert check_threshold("x", "0.25") == 0.25
    with pytest.raises(ConfigError):
        check_threshold("x", None)


# --- settings files --------------------------------------------------------------------------------------------


def test_no_config_gives_defaults(tmp_path):
    assert find_config(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(tmp_path) is None  # a pyproject without [tool.localragas] is not a config


def test_localragas_toml_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.localragas]\njudge = "fake"\n')
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
    (tmp_path / "localragas.toml").write_text('judge = "other"\n')
    assert find_config(tmp_path) == tmp_path / "localragas.toml"


def test_load_settings_from_pyproject(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text('[tool.localragas]\njudge = "fake"\nmetrics = ["faithfulness"]\n[tool.localragas.thresholds]\n'
                 'faithfulness = 0.9\n')
    s = load_settings(p)
    assert s == RunSettings(judge="fake", metrics=["faithfulness"], thresholds={"faithfulness": 0.9}, config=str(p),
                            threshold_origins={"faithfulness": "set in pyproject.toml"})


def test_load_settings_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "missing.toml")
    bad = tmp_path / "localragas.toml"
    bad.write_text("judge = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(bad)
    bad.write_text("[thresholds]\nfaithfulness = 1.5\n")
    with pytest.raises(ConfigError, match="faithfulness"):
        load_settings(bad)


def test_config_key_source_is_a_config_error(tmp_path):
    p = tmp_path / "localragas.toml"
    p.write_text('source = "mine"\n')
    with pytest.raises(ConfigError):
        load_settings(p)


# --- command line ----------------------------------------------------------------------------------------------


def rows(n: int) -> list[dict]:
    return [
        {"id": f"s{i}", "category": "even" if i % 2 == 0 else "odd", "question": f"What is the colour of item {i}?",
         "contexts": [f"Item {i} is painted bright red by the factory.", "Unrelated text about weather patterns."],
         "answer": f"Item {i} is painted bright red by the factory.", "reference": f"Item {i} is bright red."}
        for i in range(n)
    ]


def test_cli_gate_passes_with_low_thresholds():
    r = cli("eval", EXAMPLE, *FAST, *ALL_ZERO)
    assert r.exit_code == 0, r.output
    assert "quality gate PASSED" in r.output


def test_cli_gate_fails_with_message(tmp_path):
    out = tmp_path / "r.json"
    r = cli("eval", EXAMPLE, *FAST, *ALL_ZERO, "-t", "faithfulness=1", "--out", out)
    assert r.exit_code == 1, r.output
    assert "quality gate FAILED" in r.output
    mean = Report.model_validate_json(out.read_text()).summary_for("faithfulness").mean
    assert mean < 1
    assert f"faithfulness {mean:.3f} < 1.00: {PROBLEMS['faithfulness']}" in r.output


def test_cli_no_gate_exits_zero():
    r = cli("eval", EXAMPLE, *FAST, "-t", "faithfulness=1", "--no-gate")
    assert r.exit_code == 0, r.output
    assert "quality gate: off" in r.output


@pytest.mark.parametrize("args, fragment", [
    (["-t", "faithfulness=2"], "faithfulness"),
    (["-t", "faithfulness"], "METRIC=VALUE"),
    (["-m", "faithfulness,bogus"], "bogus"),
    (["--judge", "bogus"], "unknown judge 'bogus'"),
    (["--judge-option", "n_ctx=512"], "no --judge-option"),
])
def test_cli_bad_usage_exits_2(args, fragment):
    r = cli("eval", EXAMPLE, "--judge", "fake", "--embedder", "fake", "--no-progress", *args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output
    assert "Traceback" not in r.output


def test_cli_missing_file_exits_2(tmp_path):
    missing = tmp_path / "nope.jsonl"
    r = cli("eval", missing, *FAST)
    assert r.exit_code == 2
    assert "nope.jsonl" in r.output and "file not found" in r.output


def test_cli_judge_option_without_equals_exits_2():
    r = cli("eval", EXAMPLE, *FAST, "--judge-option", "n_ctx")
    assert r.exit_code == 2
    assert "KEY=VALUE" in r.output


def test_cli_out_json_has_per_sample_evidence(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rows(4))
    out = tmp_path / "sub" / "report.json"
    r = cli("eval", data, *FAST, *ALL_ZERO, "--out", out)
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.output
    report = Report.model_validate_json(out.read_text())
    assert [s.id for s in report.samples] == ["s0", "s1", "s2", "s3"]
    assert report.metrics == list(DEFAULT)  # the four RAGAS core metrics
    assert report.meta["dataset"] == str(data)
    assert report.meta["judge"]["name"] == "fake" and report.meta["embedder"] == {"name": "fake"}
    for s in report.samples:
        assert s.metrics["faithfulness"].evidence["claims"]
        assert s.metrics["context_precision"].evidence["chunks"]
        assert len(s.metrics["answer_relevancy"].evidence["generated_questions"]) == 3
        assert s.metrics["context_recall"].evidence["statements"]
    assert sorted(report.by_category) == ["even", "odd"]


def test_cli_csv(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rows(3))
    out = tmp_path / "scores.csv"
    r = cli("eval", data, *FAST, *ALL_ZERO, "--csv", out, "-m", "faithfulness,context_recall")
    assert r.exit_code == 0, r.output
    table = list(csv.reader(io.StringIO(out.read_text())))
    assert table[0] == ["id", "category", "question", "answer", "contexts", "reference", "faithfulness",
                        "context_recall", "faithfulness_unscored", "context_recall_unscored", "seconds"]
    assert [row[0] for row in table[1:]] == ["s0", "s1", "s2"]
    for row, given in zip(table[1:], rows(3)):
        assert row[2:6] == [given["question"], given["answer"], json.dumps(given["contexts"]), given["reference"]]
        assert 0.0 <= float(row[6]) <= 1.0 and row[8] == ""


def test_cli_csv_unscored_reason_and_empty_value(tmp_path):
    rec = rows(1)[0] | {"reference": None}
    data = write_jsonl(tmp_path / "d.jsonl", [rec, rows(2)[1]])  # a row with a reference: -m names the metric
    out = tmp_path / "scores.csv"
    r = cli("eval", data, *FAST, "--csv", out, "-m", "context_recall", "--no-gate")
    assert r.exit_code == 0, r.output
    header, row, _ = list(csv.reader(io.StringIO(out.read_text())))
    assert dict(zip(header, row))["context_recall"] == ""
    assert dict(zip(header, row))["context_recall_unscored"] == "no_reference"


def test_cli_csv_neutralises_formula_injection(tmp_path):
    recs = rows(3)
    recs[0]["id"] = "=HYPERLINK(\"http://evil\")"
    recs[1]["id"] = "+1"
    recs[2]["category"] = "@SUM(A1)"
    recs[2]["question"] = "=cmd|' /C calc'!A0"  # the sample's text too
    data = write_jsonl(tmp_path / "d.jsonl", recs)
    out = tmp_path / "scores.csv"
    r = cli("eval", data, *FAST, "--csv", out, "-m", "faithfulness", "--no-gate")
    assert r.exit_code == 0, r.output
    table = list(csv.reader(io.StringIO(out.read_text())))
    assert table[1][0] == "'=HYPERLINK(\"http://evil\")"
    assert table[2][0] == "'+1"
    assert table[3][1] == "'@SUM(A1)"
    assert table[3][2] == "'=cmd|' /C calc'!A0"
    assert float(table[1][6]) >= 0  # numbers are left alone


def test_cli_limit(tmp_path):
    out = tmp_path / "r.json"
    r = cli("eval", EXAMPLE, *FAST, "--limit", "3", "--out", out, "--no-gate")
    assert r.exit_code == 0, r.output
    report = Report.model_validate_json(out.read_text())
    first3 = [json.loads(line)["id"] for line in EXAMPLE.read_text().splitlines()[:3]]
    assert [s.id for s in report.samples] == first3
    assert report.meta["samples"] == 3
    assert "3 samples" in r.output


def test_cli_limit_must_be_positive():
    r = cli("eval", EXAMPLE, *FAST, "--limit", "0")
    assert r.exit_code == 2


def test_cli_invalid_row_stops_without_skip_invalid(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [*rows(2), {"id": "bad", "question": "Q?", "contexts": []}])
    r = cli("eval", data, *FAST)
    assert r.exit_code == 2
    assert "line 3" in r.output and "answer" in r.output


@pytest.mark.parametrize("thresholds, code", [(ALL_ZERO, 0), ([*ALL_ZERO, "-t", "answer_relevancy=1"], 1)])
def test_cli_skip_invalid_records_the_row_and_exits_by_gate(tmp_path, thresholds, code):
    data = write_jsonl(tmp_path / "d.jsonl", [rows(2)[0], "{not json", rows(2)[1]])
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "--skip-invalid", "--out", out, *thresholds)
    assert r.exit_code == code, r.output
    report = Report.model_validate_json(out.read_text())
    assert [s.id for s in report.samples] == ["s0", "s1"]
    assert len(report.skipped) == 1
    sk = report.skipped[0]
    assert sk.line == 2 and "invalid JSON" in sk.reason and sk.path == str(data)
    assert "1 invalid row(s) skipped" in r.output


@pytest.mark.parametrize("name, text, thresholds, code", [
    ("localragas.toml", 'judge = "fake"\nembedder = "fake"\nmetrics = ["faithfulness", "answer_relevancy"]\n'
     "[thresholds]\nfaithfulness = 0.0\nanswer_relevancy = 1.0\n", {"faithfulness": 0.0, "answer_relevancy": 1.0}, 1),
    ("pyproject.toml", '[project]\nname = "demo"\n\n[tool.localragas]\njudge = "fake"\n'
     'metrics = ["context_precision"]\n[tool.localragas.thresholds]\ncontext_precision = 1.0\n',
     {"context_precision": 1.0}, 0),
])
def test_cli_a_settings_file_sets_judge_metrics_and_thresholds(tmp_path, monkeypatch, name, text, thresholds, code):
    """localragas.toml, or the [tool.localragas] table of pyproject.toml, in the working folder."""
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "d.jsonl", rows(2))
    Path(name).write_text(text)
    r = cli("eval", "d.jsonl", "--no-progress", "--out", "r.json")
    report = Report.model_validate_json(Path("r.json").read_text())
    assert report.metrics == list(thresholds)
    assert report.meta["thresholds"] == thresholds
    assert report.meta["config"].endswith(name)
    assert report.meta["judge"]["name"] == "fake"
    assert r.exit_code == code, r.output
    if name == "pyproject.toml":
        # each sample has one relevant chunk ranked first and one irrelevant one: AP = 1.0 -> passes
        assert report.summary_for("context_precision").mean == 1.0
        return
    assert report.meta["embedder"] == {"name": "fake"}
    assert report.summary_for("answer_relevancy").mean < 1.0
    assert "answer_relevancy" in r.output and "< 1.00" in r.output
    # a command-line threshold overrides the file
    r = cli("eval", "d.jsonl", "--no-progress", "-t", "answer_relevancy=0")
    assert r.exit_code == 0, r.output


def test_cli_explicit_config_option(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", rows(1))
    cfg = tmp_path / "ci.toml"
    cfg.write_text('judge = "fake"\n[thresholds]\nfaithfulness = 0\n')
    r = cli("eval", data, "--config", cfg, "--no-progress", "-m", "faithfulness")
    assert r.exit_code == 0, r.output
    r = cli("eval", data, "--config", tmp_path / "missing.toml", "--no-progress")
    assert r.exit_code == 2 and "missing.toml" in r.output


@pytest.mark.parametrize("text, named", [
    ('judge = "fake"\nthreshold = 0.5\n', ["'threshold'", "localragas.toml"]),  # a bad key: named, and the file
    ('judge = "fake"\n[thresholds]\nfaithfulness = 2\n', ["faithfulness"]),  # a threshold out of [0, 1]
])
def test_cli_bad_config_exits_2_naming_what_is_wrong(tmp_path, monkeypatch, text, named):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "d.jsonl", rows(1))
    Path("localragas.toml").write_text(text)
    r = cli("eval", "d.jsonl", "--no-progress")
    assert r.exit_code == 2
    assert all(n in r.output for n in named), r.output


def test_cli_threshold_for_unknown_metric_is_refused():
    r = cli("eval", EXAMPLE, *FAST, *ALL_ZERO, "-t", "faithfulnes=0.95")
    assert r.exit_code == 2
    assert "faithfulnes" in r.output


def test_cli_metrics_command_lists_every_metric_the_four_core_ones_first():
    r = cli("metrics")
    assert r.exit_code == 0
    lines = [line for line in r.output.splitlines() if line and not line.startswith((" ", "default:"))]
    names = [line.split()[0] for line in lines]
    assert names[:4] == ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
    assert names == list(all_metrics())
    assert all(" default; " in line for line in lines[:4]) and not any(" default; " in line for line in lines[4:])
    assert "embedder" in r.output  # answer_relevancy says it needs one
    noise = [line for line in lines if line.startswith("noise_sensitivity_")]
    assert len(noise) == 2 and all("lower is better" in line for line in noise)
    assert "needs retrieved_context_ids, reference_context_ids" in r.output


def test_cli_models_path_unknown_exits_2():
    r = cli("models", "path", "nope")
    assert r.exit_code == 2
    assert "unknown model 'nope'" in r.output


def test_cli_models_path_missing_names_the_pull_command(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALRAGAS_MODELS_DIR", str(tmp_path))
    r = cli("models", "path", "smollm2-135m")
    assert r.exit_code == 2
    assert "localragas models pull smollm2-135m" in r.output


def test_cli_version():
    r = cli("--version")
    assert r.exit_code == 0 and "localragas" in r.output
