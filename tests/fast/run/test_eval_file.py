"""A whole eval in one settings file: `localragas eval` with no arguments runs the project's eval (data, metrics,
columns, thresholds and reports from localragas.toml or [tool.localragas]); [evals.NAME] tables are named evals
layered over the file's top-level keys (`--eval NAME`); flags override; paths in the file are relative to its folder."""
from __future__ import annotations

from pathlib import Path

import pytest

import localragas
from localragas.core.errors import ConfigError
from localragas.run.config import load_eval, load_settings

from cli_helpers import cli, sample_rows, write_file, write_jsonl

FLAGS = ("--no-cache", "--no-resume", "--no-progress")
PROJECT = '''judge = "fake"
embedder = "fake"
data = "data/samples.jsonl"
metrics = ["faithfulness"]
out = "reports/report.json"
md = "reports/summary.md"

[columns]
question = "query"

[thresholds]
faithfulness = 0.45

[evals.nightly]
data = "data/nightly.jsonl"
metrics = ["faithfulness", "context_recall"]
out = "reports/nightly.json"
junit = "reports/nightly.xml"

[evals.nightly.thresholds]
context_recall = 0.1
'''


def _rows(n: int, prefix: str) -> list[dict]:
    """n rows with the question in a column named `query` (the file's [columns] maps it), ids prefix0, prefix1, …"""
    return [{**{k: v for k, v in row.items() if k != "question"}, "query": row["question"], "id": f"{prefix}{i}"}
            for i, row in enumerate(sample_rows(n))]


@pytest.fixture
def project(tmp_path) -> Path:
    """A project folder: localragas.toml, data/samples.jsonl (2 rows), data/nightly.jsonl (3 rows), reports/."""
    (tmp_path / "data").mkdir()
    (tmp_path / "reports").mkdir()
    write_jsonl(tmp_path / "data" / "samples.jsonl", _rows(2, "s"))
    write_jsonl(tmp_path / "data" / "nightly.jsonl", _rows(3, "n"))
    write_file(tmp_path, "localragas.toml", PROJECT)
    return tmp_path


def _report(path: Path) -> localragas.Report:
    return localragas.Report.model_validate_json(path.read_text(encoding="utf-8"))


def _thresholds(report: localragas.Report) -> dict[str, float]:
    return {r.metric: r.threshold for r in report.gate.results}


def test_eval_with_no_arguments_runs_the_files_eval(project, monkeypatch):
    monkeypatch.chdir(project)
    r = cli("eval", *FLAGS)
    assert r.exit_code == 0, r.output
    report = _report(project / "reports" / "report.json")
    assert [s.id for s in report.samples] == ["s0", "s1"]  # the file's data, its question read from `query`
    assert report.metrics == ["faithfulness"] and _thresholds(report) == {"faithfulness": 0.45}
    assert report.meta["dataset"] == str(project / "data" / "samples.jsonl") and "eval" not in report.meta
    assert report.meta["judge"]["name"] == "fake"
    assert "| faithfulness |" in (project / "reports" / "summary.md").read_text(encoding="utf-8")
    assert not (project / "reports" / "nightly.json").exists()


def test_a_named_eval_is_its_table_over_the_files_keys(project, monkeypatch):
    monkeypatch.chdir(project)
    r = cli("eval", "--eval", "nightly", *FLAGS)
    report = _report(project / "reports" / "nightly.json")
    assert [s.id for s in report.samples] == ["n0", "n1", "n2"] and report.metrics == ["faithfulness", "context_recall"]
    assert report.meta["eval"] == "nightly" and report.meta["judge"]["name"] == "fake"  # judge: the top level's
    assert _thresholds(report) == {"faithfulness": 0.45, "context_recall": 0.1}  # a table merged key by key
    assert (project / "reports" / "nightly.xml").exists()
    # the top level's reports are the top-level eval's: not inherited, never overwritten by a named eval
    assert not (project / "reports" / "summary.md").exists() and not (project / "reports" / "report.json").exists()
    assert r.exit_code == (0 if report.gate.passed else 1), r.output


def test_flags_override_the_file_and_are_taken_from_the_working_folder(project, monkeypatch, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    write_jsonl(elsewhere / "mine.jsonl", _rows(1, "m"))
    monkeypatch.chdir(elsewhere)
    r = cli("eval", "mine.jsonl", "--config", project / "localragas.toml", "--eval", "nightly", "--out", "mine.json",
            "-m", "faithfulness", "-t", "faithfulness=0.2", *FLAGS)
    assert r.exit_code in (0, 1), r.output
    report = _report(elsewhere / "mine.json")  # DATA and --out relative to the working folder, not the file's
    assert [s.id for s in report.samples] == ["m0"] and report.metrics == ["faithfulness"]
    assert _thresholds(report) == {"faithfulness": 0.2}
    assert not (project / "reports" / "nightly.json").exists()
    assert (project / "reports" / "nightly.xml").exists()  # a report the flags did not name: the file's, its folder


def test_paths_in_the_file_are_relative_to_its_folder(project, monkeypatch, tmp_path_factory):
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    r = cli("eval", "--config", project / "localragas.toml", *FLAGS)
    assert r.exit_code == 0, r.output
    assert [s.id for s in _report(project / "reports" / "report.json").samples] == ["s0", "s1"]
    _, io = load_eval(project / "localragas.toml", "nightly")
    assert (io.data, io.out, io.md) == (project / "data" / "nightly.jsonl", project / "reports" / "nightly.json",
                                        None)


def test_a_named_eval_never_writes_the_top_levels_reports_and_two_evals_may_not_share_one(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "localragas.toml").write_text(PROJECT.replace('md = "reports/summary.md"', 'md = "reports/summary.md"\n'
                                                            'html = "reports/report.html"'), encoding="utf-8")
    r = cli("eval", "--eval", "nightly", "--no-gate", *FLAGS)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (project / "reports").iterdir()) == ["nightly.json", "nightly.xml"]
    assert "summary.md" not in r.output and "report.html" not in r.output

    shared = PROJECT + '\n[evals.weekly]\ndata = "data/nightly.jsonl"\nmd = "reports/./summary.md"\n'
    (project / "localragas.toml").write_text(shared, encoding="utf-8")
    for args in ((), ("--eval", "nightly"), ("--eval", "weekly")):  # whichever is run, before anything runs
        r = cli("eval", *args, *FLAGS)
        assert r.exit_code == 2, r.output
        assert ("the top-level eval (key 'md') and [evals.weekly] (key 'evals.weekly.md') would both write "
                "reports/./summary.md: each eval writes its own reports") in " ".join(r.output.split())
    assert sorted(p.name for p in (project / "reports").iterdir()) == ["nightly.json", "nightly.xml"]


def test_a_pyproject_table_holds_a_whole_eval_too(project, monkeypatch):
    (project / "localragas.toml").unlink()
    text = PROJECT.replace("[evals.", "[tool.localragas.evals.").replace("[columns]", "[tool.localragas.columns]")
    text = text.replace("[thresholds]", "[tool.localragas.thresholds]")
    write_file(project, "pyproject.toml", "[project]\nname = 'x'\n\n[tool.localragas]\n" + text)
    monkeypatch.chdir(project)
    r = cli("eval", "--eval", "nightly", "--no-gate", *FLAGS)
    assert r.exit_code == 0, r.output
    assert [s.id for s in _report(project / "reports" / "nightly.json").samples] == ["n0", "n1", "n2"]


def test_no_data_anywhere_names_both_ways(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("eval", *FLAGS)
    assert r.exit_code == 2
    assert "no data to evaluate: give DATA (localragas eval data.jsonl) or a `data = \"…\"` key in " \
           "./localragas.toml (or [tool.localragas] in ./pyproject.toml)" in r.output
    write_file(tmp_path, "localragas.toml", 'judge = "fake"\n[evals.smoke]\nmetrics = ["faithfulness"]\n')
    r = cli("eval", "--eval", "smoke", *FLAGS)
    assert r.exit_code == 2 and "give DATA (localragas eval data.jsonl) or a `data = \"…\"` key in " \
                                f"{tmp_path / 'localragas.toml'} [evals.smoke]" in r.output


@pytest.mark.parametrize("text, args, message", [
    (PROJECT, ("--eval", "nighty"), "localragas.toml: no eval 'nighty' (did you mean 'nightly'?); evals in the file: "
                                    "nightly"),
    ('judge = "fake"\n', ("--eval", "nightly"), "localragas.toml: no eval 'nightly'; the file has no [evals.NAME] "
                                                "table"),
    (None, ("--eval", "nightly"), "--eval nightly: no settings file here (./localragas.toml, or [tool.localragas] in "
                                  "./pyproject.toml)"),
    ('data = ["a.jsonl", "b.jsonl"]\n', (), "localragas.toml: key 'data': one data file per eval (a report is of one "
                                            "dataset"),
    ('[evals.nightly]\nconcurrency = 2\n', ("--eval", "nightly"), "localragas.toml: key 'evals.nightly.concurrency': "
                                                                  "not a setting of the file; valid: metrics, "),
    ('[evals.nightly]\nmax_error_rate = 2\n', ("--eval", "nightly"), "localragas.toml [evals.nightly]: key "
                                                                     "'max_error_rate': max error rate must be"),
    ('evals = 3\n', (), "localragas.toml: key 'evals': a table of named evals, [evals.NAME]"),
])
def test_a_bad_file_or_eval_name_is_named(tmp_path, monkeypatch, text, args, message):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "d.jsonl", _rows(1, "x"))
    if text is not None:
        write_file(tmp_path, "localragas.toml", text)
    r = cli("eval", "d.jsonl", *args, *FLAGS)
    assert r.exit_code == 2 and message in r.output, r.output
    assert "Traceback" not in r.output


def test_python_loads_a_named_evals_settings_for_evaluate(project):
    settings = load_settings(project / "localragas.toml", eval="nightly")
    assert settings.metrics == ["faithfulness", "context_recall"] and settings.columns == {"question": "query"}
    report = localragas.evaluate(project / "data" / "nightly.jsonl", settings, cache=False, progress=False)
    assert report.metrics == ["faithfulness", "context_recall"]
    assert _thresholds(report) == {"faithfulness": 0.45, "context_recall": 0.1}
    with pytest.raises(ConfigError, match="no eval 'weekly'"):
        load_settings(project / "localragas.toml", eval="weekly")
    assert load_settings(project / "localragas.toml").thresholds == {"faithfulness": 0.45}


def test_the_config_file_pages_example_holds_what_the_page_says(tmp_path, monkeypatch):
    """docs/config-file.md's localragas.toml: read as written, its layering as the page says, its Python block run."""
    import re

    page = (Path(__file__).resolve().parents[3] / "docs" / "config-file.md").read_text(encoding="utf-8")
    [toml] = re.findall(r"```toml\n(.*?)```", page, re.S)
    [python] = re.findall(r"```python\n(.*?)```", page, re.S)
    path = write_file(tmp_path, "localragas.toml", toml)
    (tmp_path / "data").mkdir()
    write_jsonl(tmp_path / "data" / "nightly.jsonl", _rows(2, "n"))
    top, top_io = load_eval(path)
    nightly, io = load_eval(path, "nightly")
    assert top_io.data == tmp_path / "data" / "rag_samples.jsonl" and top_io.mlflow is None
    assert (io.data, io.out, io.html, io.md) == (tmp_path / "data" / "nightly.jsonl",
                                                 tmp_path / "reports" / "nightly.json", None, None)
    assert (io.mlflow, io.mlflow_experiment) == (True, "rag-nightly")
    assert nightly.thresholds == {"faithfulness": 0.85, "context_recall": 0.75} and nightly.columns == top.columns
    monkeypatch.chdir(tmp_path)
    env: dict = {}
    exec(python.replace('judge="fake", embedder="fake"', 'judge="fake", embedder="fake", cache=False, '  # noqa: S102
                                                         'progress=False'), env)
    assert [s.id for s in env["report"].samples] == ["n0", "n1"]
