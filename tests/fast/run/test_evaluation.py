"""localragas.run.evaluation: one run as a library call. spec_from_flags layers flag over settings file over default;
run_eval fills the report's metadata; `localragas eval` is spec_from_flags + run_eval + the outputs."""
from __future__ import annotations

import json

import pytest

import localragas.judges.calibrated
import localragas.metrics
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge, Judging
from localragas.run.evaluation import Evaluation, RunSpec, run_eval, spec_from_flags
from localragas.run.gate import parse_thresholds
from localragas.core.key_values import parse_columns, parse_metric_options, parse_options, split_item
from localragas.report import read_json

from calibration_helpers import calibration_file
from cli_helpers import cli, write_file

FAKE = {"judge": "fake", "embedder": "fake", "progress": False}
VOLATILE = ("started", "wall_seconds", "share_of_wall_in_judge")


SETTINGS = ('thresholds = {faithfulness = 0.3, context_recall = 0.2}\ngate_on = "lower-bound"\nmax_error_rate = 0.25\n'
            '[metric_options.answer_correctness]\nweights = [0.5, 0.5]\nbeta = 2\n')


@pytest.fixture
def toml(tmp_path, monkeypatch):
    """A settings file for a run with the fake judge (which takes no judge options)."""
    monkeypatch.chdir(tmp_path)  # the state folder, and no settings file found by default
    return write_file(tmp_path, "settings.toml", SETTINGS)


@pytest.fixture
def full_toml(toml):
    return write_file(toml.parent, "full.toml", SETTINGS + '[judge_options]\nn_ctx = 1024\nseed = 1\n')


def test_a_flag_beats_the_settings_file_which_beats_the_default(full_toml, data):
    toml = full_toml
    default = spec_from_flags(data)
    assert (default.thresholds, default.judge_options, default.metric_options) == ({}, {}, {})
    assert (default.gate_on, default.max_error_rate, default.config) == ("mean", 0.0, None)
    from_file = spec_from_flags(data, config=toml)
    assert from_file.thresholds == {"faithfulness": 0.3, "context_recall": 0.2}
    assert from_file.judge_options == {"n_ctx": 1024, "seed": 1}
    assert from_file.metric_options == {"answer_correctness": {"weights": [0.5, 0.5], "beta": 2}}
    assert (from_file.gate_on, from_file.max_error_rate, from_file.config) == ("lower-bound", 0.25, str(toml))
    flags = spec_from_flags(data, config=toml, threshold=["faithfulness=0.9"], judge_option=["seed=7"],
                            metric_option=["answer_correctness.beta=1"], gate_on="mean", max_error_rate=0.0)
    assert flags.thresholds == {"faithfulness": 0.9, "context_recall": 0.2}  # per metric, per key
    assert flags.judge_options == {"n_ctx": 1024, "seed": 7}
    assert flags.metric_options == {"answer_correctness": {"weights": [0.5, 0.5], "beta": 1}}
    assert (flags.gate_on, flags.max_error_rate) == ("mean", 0.0)


def test_the_default_settings_file_is_found_in_the_current_folder(toml, data):
    (toml.parent / "localragas.toml").write_text(toml.read_text())
    assert spec_from_flags(data).thresholds["faithfulness"] == 0.3


def test_run_eval_fills_the_metadata(toml, data):
    report = run_eval(spec_from_flags(data, config=toml, shard="2/2", no_cache=True, metrics=["faithfulness,answer_correctness"],
                                      **FAKE))
    meta = report.meta
    assert meta["dataset"] == str(data) and len(meta["dataset_sha256"]) == 64
    assert meta["shard"] == {"index": 2, "count": 2, "total": 2, "positions": [1]}
    assert meta["config"] == str(toml) and meta["judge_cache"] is None
    assert [s.id for s in report.samples] == ["s1"]
    assert report.gate.results[0].threshold == 0.3  # the settings file's faithfulness threshold
    assert not list((toml.parent / ".localragas" / "runs").glob("*.jsonl"))  # the checkpoint went with the run


def test_a_spec_made_in_python_runs(tmp_path, monkeypatch, data):
    monkeypatch.chdir(tmp_path)
    report = run_eval(RunSpec(str(data), metrics=["faithfulness"], judge="fake", cache=False, resume=False, limit=1))
    assert [s.id for s in report.samples] == ["s0"] and report.metrics == ["faithfulness"]
    assert "shard" not in report.meta and "config" not in report.meta


def test_a_resumed_eval_builds_its_judging_context_once(tmp_path, monkeypatch, data):
    monkeypatch.chdir(tmp_path)  # the checkpoint in this state folder
    cal = calibration_file(tmp_path / "cal.json")
    args = ("--judge", "fake", "--embedder", "fake", "--no-cache", "--no-progress", "--judge-option",
            f"calibration={cal}", "-m", "faithfulness")
    first = Evaluation(spec_from_flags(data, judge="fake", embedder="fake", no_cache=True, progress=False,
                                       judge_option=[f"calibration={cal}"], metrics=["faithfulness"]))
    first.run()
    first.close()  # not finished: its checkpoint stays, to resume from
    built = {"judging": 0, "judge": 0, "calibration": 0}

    def counted(kind, fn):
        def wrapper(*a, **k):
            built[kind] += 1
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(Judging, "__init__", counted("judging", Judging.__init__))
    monkeypatch.setattr(FakeJudge, "__init__", counted("judge", FakeJudge.__init__))
    monkeypatch.setattr(localragas.judges.calibrated, "load_calibration",
                        counted("calibration", localragas.judges.calibrated.load_calibration))
    r = cli("eval", data, *args, "--out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["meta"]["resumed_samples"] == 2 and report["meta"]["calibration"]["source"] == cal
    assert built == {"judging": 1, "judge": 1, "calibration": 1}


def _comparable(value):
    """A report as JSON without what differs from run to run: the start, and times in seconds."""
    if hasattr(value, "model_dump_json"):
        value = json.loads(value.model_dump_json())
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in VOLATILE and "seconds" not in k}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def test_the_cli_and_run_eval_give_the_same_report(toml, data, tmp_path):
    out = tmp_path / "r.json"
    args = ["--config", toml, "-t", "faithfulness=0.9", "--metric-option", "answer_correctness.beta=1",
            "-m", "faithfulness,answer_correctness", "--limit", "2", "--no-cache"]
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-progress", *args, "--out", out)
    assert r.exit_code in (0, 1), r.output
    spec = spec_from_flags(data, config=toml, threshold=["faithfulness=0.9"], metric_option=["answer_correctness.beta=1"],
                           metrics=["faithfulness,answer_correctness"], limit=2, no_cache=True, **FAKE)
    assert _comparable(run_eval(spec)) == _comparable(read_json(out))


@pytest.mark.parametrize("parse, where, item, shape", [
    (lambda i, w: parse_options(i, w), "--judge-option", "n_ctx", "KEY=VALUE, e.g. n_ctx=4096"),
    (lambda i, w: parse_options(i, w), "--judge-option", "=4096", "KEY=VALUE"),
    (lambda i, w: parse_metric_options(i, w), "--metric-option", "verdicts=json", "METRIC.KEY=VALUE"),
    (lambda i, w: parse_metric_options(i, w), "--metric-option", "faithfulness.=json", "METRIC.KEY=VALUE"),
    (lambda i, w: parse_columns(i, w), "--columns", "question", "FIELD=COLUMN, e.g. question=query"),
    (lambda i, w: parse_columns(i, w), "--columns", "question=", "FIELD=COLUMN"),
    (lambda i, w: parse_thresholds(i, where=w), "--threshold", "faithfulness", "METRIC=VALUE"),
])
def test_one_parser_one_message_naming_the_flag_and_the_item(parse, where, item, shape):
    with pytest.raises(ConfigError) as e:
        parse([item], where)
    assert str(e.value).startswith(f"{where}: '{item}' must look like {shape}")


def test_values_are_json_when_they_are_json():
    assert parse_options([" n_ctx = 4096", "path=/a=b", "flag=true", "w=[1, 2]"], "x") == {
        "n_ctx": 4096, "path": "/a=b", "flag": True, "w": [1, 2]}
    assert parse_columns(["question=query,answer = response", "reference=gold"], "--columns", {"x": "y"}) == {
        "x": "y", "question": "query", "answer": "response", "reference": "gold"}
    assert split_item("a=b=c", "x") == ("a", "b=c")


@pytest.mark.parametrize("args, flag", [
    (["eval", "{data}", "--judge-option", "n_ctx"], "--judge-option"),
    (["eval", "{data}", "--metric-option", "beta=2"], "--metric-option"),
    (["eval", "{data}", "--columns", "question"], "--columns"),
    (["calibrate", "{data}", "--judge-option", "n_ctx"], "--judge-option"),
    (["calibrate", "{data}", "--columns", "question"], "--columns"),
    (["report", "{data}", "-t", "faithfulness"], "--threshold"),
])
def test_every_command_names_the_flag_of_a_malformed_item(data, args, flag):
    r = cli(*[a.format(data=data) for a in args])
    assert r.exit_code == 2 and f"Error: {flag}: '" in r.output and "Traceback" not in r.output, r.output


def test_calibrate_reads_its_settings_from_config(tmp_path, monkeypatch, data):
    monkeypatch.chdir(tmp_path)
    rows = [{**json.loads(line), "label": {"metric": "faithfulness", "kind": "binary", "value": i % 2}}
            for i, line in enumerate(data.read_text().splitlines())]
    labelled = write_file(tmp_path, "l.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    toml = write_file(tmp_path, "s.toml", 'judge = "fake"\nembedder = "fake"\nthresholds = {faithfulness = 0.3}\n')
    out = tmp_path / "c.json"
    r = cli("calibrate", labelled, "--config", toml, "--no-progress", "--no-cache", "--out", out)
    assert r.exit_code == 0, r.output
    meta = json.loads(out.read_text())["meta"]
    assert meta["judge"]["name"] == "fake" and meta["thresholds"]["faithfulness"] == 0.3
    r = cli("calibrate", labelled, "--config", toml, "-t", "faithfulness=0.6", "--no-progress", "--no-cache",
            "--out", out)
    assert r.exit_code == 0 and json.loads(out.read_text())["meta"]["thresholds"]["faithfulness"] == 0.6


def test_eval_builds_its_run_once(data, tmp_path, monkeypatch):
    """One path for a sample (run/prepared_run.py): the settings' custom metrics are registered, the metrics chosen,
    the unscorable ones refused and the judge's window checked once per run, and the resume checkpoint keyed by the
    run's own metrics."""
    from localragas.run import prepared_run  # noqa: PLC0415

    calls = {"register": 0, "metrics": 0, "refuse": 0, "window": 0}

    def counted(kind, fn):
        def wrapper(*a, **k):
            calls[kind] += 1
            return fn(*a, **k)
        return wrapper

    for kind, name in (("register", "register_custom_metrics"), ("metrics", "get_metrics"),
                       ("refuse", "refuse_unscorable"), ("window", "check_window")):
        monkeypatch.setattr(prepared_run, name, counted(kind, getattr(prepared_run, name)))
    monkeypatch.setattr("localragas.metrics.get_metrics", counted("metrics", localragas.metrics.get_metrics))
    monkeypatch.chdir(tmp_path)
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache", "--no-history",
            "-m", "faithfulness,context_recall", "--out", tmp_path / "r.json")
    assert r.exit_code in (0, 1), r.output
    assert calls == {"register": 1, "metrics": 1, "refuse": 1, "window": 1}
    assert json.loads((tmp_path / "r.json").read_text())["metrics"] == ["faithfulness", "context_recall"]
