"""One settings model (localragas/run/settings.py RunSettings): `localragas eval`'s options, the settings file's keys,
evaluate()'s and calibrate()'s keywords and the pytest plugin's options are its fields; layered once (defaults, the
file, then flags or keywords); reading a file registers no metric."""
from __future__ import annotations

from typing import Literal, get_args

import pytest

import localragas
from localragas.cli.eval import eval_cmd
from localragas.core.errors import ConfigError
from localragas.metrics import all_metrics
from localragas.run.config import load_settings
from localragas.run.settings import EvalIO, RunSettings, file_keys, flag_of

from cli_helpers import cli, write_file

ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue.",
         "contexts": ["The sky is blue on a clear day."], "reference": "Blue."}]
FAKE = {"judge": "fake", "embedder": "fake", "cache": False, "progress": False, "metrics": ["faithfulness"]}


def test_every_flagged_setting_is_an_eval_option_with_the_fields_help_type_and_bounds():
    options = {o.name: o for o in eval_cmd.params}
    flagged = [n for n in RunSettings.model_fields if flag_of(n) is not None]
    assert len(flagged) == 30
    for name in flagged:
        flag, field = flag_of(name), RunSettings.model_fields[name]
        option = options[flag.dest]
        assert option.opts[0] == flag.names[0].split("/")[0] and option.help == field.description, name
    assert (options["max_error_rate"].type.min, options["max_error_rate"].type.max) == (0, 1)
    assert options["concurrency"].type.min == 1 and options["concurrency"].default == 1
    assert list(options["gate_on"].type.choices) == list(get_args(RunSettings.model_fields["gate_on"].annotation))
    # what eval reads and writes (the reports, MLflow) is declared beside them, in EvalIO, as the file's keys are
    io = [n for n in EvalIO.model_fields if flag_of(n) is not None]
    assert io == ["out", "csv", "html", "md", "junit", "mlflow", "mlflow_experiment", "mlflow_run_name"]
    for name in io:
        assert options[flag_of(name).dest].help == EvalIO.model_fields[name].description and name in file_keys(), name
    # what is neither stays the command's own
    assert {"data", "config_path", "eval_name", "ragas_names"} == \
        set(options) - {flag_of(n).dest for n in flagged + io}


def test_the_pytest_plugins_options_are_the_models_flags():
    from localragas import pytest_plugin

    class Group:
        def __init__(self):
            self.options = {}

        def addoption(self, name, **kw):
            self.options[name] = kw

    class Parser:
        group = Group()

        def getgroup(self, *a):
            return self.group

        def addini(self, *a, **kw):
            pass

    parser = Parser()
    pytest_plugin.pytest_addoption(parser)
    longs = {flag_of(n).names[0].split("/")[0].removeprefix("--"): n for n in RunSettings.model_fields if flag_of(n)}
    for option, kw in parser.group.options.items():
        name = longs[option.removeprefix("--localragas-")]  # --localragas-judge-option: judge_options
        if "choices" in kw:
            assert tuple(kw["choices"]) == get_args(RunSettings.model_fields[name].annotation)
        assert (kw.get("action") == "append") == (flag_of(name).kind == "items"), option
        assert (kw.get("action") == "store_true") == (flag_of(name).kind == "off"), option


def test_the_settings_files_keys_are_the_fields_marked_in_file(tmp_path):
    in_the_file = [n for n in file_keys() if n in RunSettings.model_fields]
    assert in_the_file == ["metrics", "metric_options", "language", "judge", "judge_options", "embedder",
                           "thresholds", "max_error_rate", "gate_on", "labels", "columns", "max_input_bytes",
                           "engine", "address", "prompts", "judge_check", "sample_text", "history", "tags",
                           "custom_metrics"]
    path = write_file(tmp_path, "localragas.toml", "concurrency = 4\n")
    with pytest.raises(ConfigError, match="key 'concurrency': not a setting of the file; valid: metrics, "):
        load_settings(path)


def test_layered_once_a_keyword_over_the_file_over_the_default_tables_merged_by_key(tmp_path):
    path = write_file(tmp_path, "localragas.toml", 'max_error_rate = 0.2\n[thresholds]\nfaithfulness = 0.3\n'
                                                   'context_recall = 0.4\n')
    settings = load_settings(path)
    assert (settings.max_error_rate, settings.gate_on, settings.config) == (0.2, "mean", str(path))
    over = settings.over({"thresholds": {"faithfulness": 0.9}, "gate_on": "lower-bound", "max_error_rate": None}, "x")
    assert over.thresholds == {"faithfulness": 0.9, "context_recall": 0.4}
    assert (over.gate_on, over.max_error_rate) == ("lower-bound", 0.2)  # None: not given
    report = localragas.evaluate(ROWS, settings, **FAKE)
    assert report.gate.max_error_rate == 0.2 and report.meta["thresholds"] == {"faithfulness": 0.3}


@pytest.mark.parametrize("keyword, message", [
    ({"max_eror_rate": 0.1}, "evaluate(): unknown setting 'max_eror_rate' (did you mean 'max_error_rate'?); valid: "),
    ({"max_error_rate": 2}, "evaluate(): key 'max_error_rate': max error rate must be a number in [0, 1], got 2"),
    ({"concurrency": 0}, "evaluate(): key 'concurrency': concurrency must be a whole number >= 1, got 0"),
    ({"language": "fr"}, "evaluate(): key 'language': language must be one of auto, en, zh, got 'fr'"),
    ({"gate_on": "median"}, "evaluate(): key 'gate_on': gate on must be one of mean, lower-bound, got 'median'"),
    ({"shard": (1, 2)}, "evaluate(): setting 'shard' applies to a run over a data file (run_eval, localragas eval)"),
])
def test_a_bad_or_unknown_keyword_is_named(keyword, message):
    with pytest.raises(ConfigError) as e:
        localragas.evaluate(ROWS, **{**FAKE, **keyword})
    assert str(e.value).startswith(message)


def test_settings_given_where_metrics_once_were_are_refused_by_name():
    with pytest.raises(ConfigError, match=r"settings must be a RunSettings, got list \(give the metrics as metrics="):
        localragas.evaluate(ROWS, ["faithfulness"], judge="fake")


def test_calibrate_takes_the_same_keywords_and_refuses_an_evaluations():
    rows = [{**ROWS[0], "label": {"metric": "faithfulness", "kind": "binary", "value": 1}}]
    with pytest.raises(ConfigError, match="calibrate\\(\\): setting 'gate_on' does not apply to calibrate"):
        localragas.calibrate(rows, "fake", "fake", gate_on="mean")
    with pytest.raises(ConfigError, match="calibrate\\(\\): key 'limit': limit must be a whole number >= 1, got 0"):
        localragas.calibrate(rows, "fake", "fake", limit=0)
    run = localragas.calibrate(rows, "fake", "fake", cache=False, progress=False, resume=False, limit=1)
    assert run.meta["limit"] == 1 and run.results[0].rows == 1


def test_reading_a_settings_file_registers_no_metric_the_run_does(tmp_path, own_metrics, monkeypatch):
    path = write_file(tmp_path, "localragas.toml", '[custom_metrics.on_topic]\nquestion = "On topic?"\n'
                                                   'fields = ["question", "answer"]\n')
    settings = load_settings(path)
    assert "on_topic" not in all_metrics() and "on_topic" in settings.custom_metrics
    report = localragas.evaluate(ROWS, settings, **{**FAKE, "metrics": ["on_topic"]})
    assert report.metrics == ["on_topic"] and "on_topic" in all_metrics()


def test_the_cli_eval_flags_are_the_models_and_reach_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "Q?", "answer": "A.", "contexts": ["A."]}\n')
    out = tmp_path / "r.json"
    r = cli("eval", str(data), "-j", "fake", "-e", "fake", "--no-cache", "--no-resume", "--no-progress", "-m",
            "faithfulness", "--max-error-rate", "0.5", "--gate-on", "lower-bound", "-t", "faithfulness=0.1", "--out",
            str(out))
    assert r.exit_code in (0, 1), r.output
    report = localragas.Report.model_validate_json(out.read_text())
    assert (report.gate.max_error_rate, report.gate.on, report.meta["thresholds"]) == \
        (0.5, "lower-bound", {"faithfulness": 0.1})


def test_a_literal_field_is_a_choice_of_its_values():
    field = RunSettings.model_fields["language"]
    assert field.annotation == Literal["auto", "en", "zh"] and RunSettings().language == "auto"
