"""ragas compatibility: ragas column names, Parquet and `datasets` folders as input, ragas metric names as output;
--metric-option and --language on the command line."""
from __future__ import annotations

import csv
import json
import sys

import pytest

from localragas.data.dataset import load_samples
from localragas.core.errors import DatasetError, MissingDependencyError
from localragas.metrics import all_metrics
from localragas.data.ragas_compat import from_ragas_names, to_ragas_names
from localragas.data.sample_record import content_id, sample_from_dict

from cli_helpers import cli, write_jsonl

RAGAS_ROW = {
    "user_input": "Who developed Java?",
    "retrieved_contexts": ["Java was developed by Sun Microsystems.", "Python is a language."],
    "response": "Java was developed by Sun Microsystems.",
    "reference": "Sun Microsystems developed Java.",
    "retrieved_context_ids": ["doc-1", 7],
    "reference_context_ids": ["doc-1"],
    "reference_contexts": ["Sun Microsystems developed Java."],  # a ragas column localragas does not use
}
FAST = ["--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress"]


# --- input -----------------------------------------------------------------------------------------------------


def test_ragas_column_names_with_context_ids_are_read():
    s = sample_from_dict(RAGAS_ROW)
    assert (s.question, s.answer, s.reference) == (RAGAS_ROW["user_input"], RAGAS_ROW["response"],
                                                   RAGAS_ROW["reference"])
    assert s.contexts == RAGAS_ROW["retrieved_contexts"]
    assert s.retrieved_context_ids == ["doc-1", "7"] and s.reference_context_ids == ["doc-1"]
    assert s.language is None


@pytest.mark.parametrize("field, value, fragment", [
    ("retrieved_context_ids", "doc-1", "expected a list of ids"),
    ("reference_context_ids", [1.5], "expected a string or integer, got float"),
    ("reference_context_ids", [True], "expected a string or integer, got bool"),
    ("language", "fr", "expected 'en' or 'zh'"),
    ("language", 3, "expected a string"),
])
def test_bad_ids_or_language_name_the_field(field, value, fragment):
    with pytest.raises(DatasetError) as e:
        sample_from_dict({**RAGAS_ROW, field: value}, path="d.jsonl", line=4)
    assert e.value.line == 4 and e.value.field.startswith(field) and fragment in str(e.value)


def test_language_field_is_read_and_normalised():
    assert sample_from_dict({**RAGAS_ROW, "language": "ZH "}).language == "zh"
    assert sample_from_dict({**RAGAS_ROW, "language": " "}).language is None


def test_ragas_csv_export_with_python_list_cells(tmp_path):
    """pandas (ragas EvaluationDataset.to_csv) writes a list cell as "['a', 'b']", not as JSON."""
    p = tmp_path / "ragas.csv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["user_input", "retrieved_contexts", "response", "reference", "retrieved_context_ids",
                    "reference_context_ids"])
        w.writerow([RAGAS_ROW["user_input"], repr(RAGAS_ROW["retrieved_contexts"]), RAGAS_ROW["response"],
                    RAGAS_ROW["reference"], "['doc-1', 7]", ""])
    (s,), _ = load_samples(p)
    assert s.contexts == RAGAS_ROW["retrieved_contexts"]
    assert s.retrieved_context_ids == ["doc-1", "7"] and s.reference_context_ids is None  # a blank cell: no ids


def test_parquet_with_ragas_columns(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    first = {**RAGAS_ROW, "retrieved_context_ids": ["doc-1", "7"]}  # one Arrow type per column
    rows = [first, {**first, "user_input": "第二个问题？", "retrieved_context_ids": None}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    samples, skipped = load_samples(tmp_path / "d.parquet")
    assert skipped == [] and [s.id for s in samples] == [content_id(r["user_input"]) for r in rows]
    assert samples[0].contexts == RAGAS_ROW["retrieved_contexts"] and samples[1].question == "第二个问题？"
    assert samples[1].retrieved_context_ids is None


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    (tmp_path / "d.parquet").write_bytes(b"PAR1")
    with pytest.raises(MissingDependencyError, match="pip install pyarrow"):
        load_samples(tmp_path / "d.parquet")


def test_datasets_folder_without_the_datasets_package_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)
    folder = tmp_path / "ragas_ds"
    folder.mkdir()
    (folder / "dataset_info.json").write_text("{}")
    with pytest.raises(MissingDependencyError, match="pip install datasets"):
        load_samples(folder)
    r = cli("eval", folder, *FAST)
    assert r.exit_code == 2 and "pip install datasets" in r.output


def test_datasets_folder_is_read_through_load_from_disk(tmp_path, monkeypatch):
    """A stand-in for the datasets package: load_from_disk's rows become samples."""
    import types

    fake = types.ModuleType("datasets")

    class DatasetDict(dict):
        pass

    fake.DatasetDict = DatasetDict
    fake.load_from_disk = lambda path: DatasetDict(train=[RAGAS_ROW])
    monkeypatch.setitem(sys.modules, "datasets", fake)
    folder = tmp_path / "ds"
    folder.mkdir()
    (s,), _ = load_samples(folder)
    assert s.answer == RAGAS_ROW["response"] and s.retrieved_context_ids == ["doc-1", "7"]
    fake.load_from_disk = lambda path: DatasetDict(train=[], test=[])
    with pytest.raises(DatasetError, match="2 splits"):
        load_samples(folder)


# --- ragas metric names ----------------------------------------------------------------------------------------


def test_every_metric_has_a_ragas_name():
    names = {n: m.describe().ragas_name for n, m in all_metrics().items()}
    assert len(set(names.values())) == len(names)
    assert names["noise_sensitivity_relevant"] == "noise_sensitivity(mode=relevant)"
    assert names["factual_correctness"] == "factual_correctness(mode=f1)"


def test_cli_ragas_names_in_csv_and_json_and_read_back(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{**RAGAS_ROW, "id": "q1"}])
    out, scores = tmp_path / "r.json", tmp_path / "s.csv"
    metrics = "faithfulness,factual_correctness,noise_sensitivity_relevant,id_based_context_recall"
    r = cli("eval", data, *FAST, "-m", metrics, "-t", "noise_sensitivity_relevant=0.5", "--ragas-names",
            "--out", out, "--csv", scores)
    assert r.exit_code == 0, r.output
    assert "noise_sensitivit" in r.output and "lower is better" in r.output  # terminal: localragas names
    header = next(csv.reader(scores.open(encoding="utf-8")))
    assert header[2:10] == ["user_input", "response", "retrieved_contexts", "reference", "faithfulness",
                            "factual_correctness(mode=f1)", "noise_sensitivity(mode=relevant)", "id_based_context_recall"]
    stored = json.loads(out.read_text())
    assert stored["metrics"][1] == "factual_correctness(mode=f1)"
    assert set(stored["samples"][0]["metrics"]) == {"faithfulness", "factual_correctness(mode=f1)",
                                                    "noise_sensitivity(mode=relevant)", "id_based_context_recall"}
    assert stored["meta"]["thresholds"] == {"faithfulness": 0.5, "noise_sensitivity(mode=relevant)": 0.5}
    assert stored["meta"]["threshold_origins"] == {"noise_sensitivity(mode=relevant)": "set with -t"}
    assert stored["meta"]["metric_names"] == "ragas"
    # read back: localragas names again, the direction of noise sensitivity kept
    again = tmp_path / "again.csv"
    r = cli("report", out, "--csv", again)
    assert r.exit_code == 0, r.output
    assert "noise_sensitivit" in r.output and "lower is better" in r.output
    assert "noise_sensitivity_relevant <= 0.50 (set with -t)" in " ".join(r.output.split())
    assert next(csv.reader(again.open(encoding="utf-8")))[2:8] == ["question", "answer", "contexts", "reference",
                                                                   "faithfulness", "factual_correctness"]


def test_to_and_from_ragas_names_round_trip():
    from reports_helpers import make_report

    report = make_report({"a": {"noise_sensitivity_relevant": 0.2, "faithfulness": 0.9}},
                         {"noise_sensitivity_relevant": 0.3})
    renamed = to_ragas_names(report)
    assert renamed.metrics == ["noise_sensitivity(mode=relevant)", "faithfulness"]
    assert renamed.summary[0].metric == "noise_sensitivity(mode=relevant)"
    assert renamed.gate.results[0].metric == "noise_sensitivity(mode=relevant)"
    back = from_ragas_names(renamed)
    assert back.model_dump() == report.model_dump()
    assert to_ragas_names(renamed) is renamed and from_ragas_names(report) is report


# --- --metric-option, --language, config -----------------------------------------------------------------------


def test_cli_metric_option_reaches_the_metric_and_the_report(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{**RAGAS_ROW, "id": "q1"}])
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "-m", "answer_correctness", "--metric-option", "answer_correctness.weights=1,0",
            "--metric-option", "answer_correctness.beta=2", "--out", out)
    assert r.exit_code == 0, r.output
    stored = json.loads(out.read_text())
    assert stored["meta"]["metric_options"] == {"answer_correctness": {"weights": [1.0, 0.0], "beta": 2.0}}
    ev = stored["samples"][0]["metrics"]["answer_correctness"]["evidence"]
    assert ev["weights"] == [1.0, 0.0] and ev["similarity"] is None and ev["beta"] == 2.0


@pytest.mark.parametrize("option, fragment", [
    ("answer_correctness.weights=1", "weights must be two numbers"),
    ("answer_correctness.bogus=1", "unknown option(s) bogus"),
    ("answercorrectness=1", "METRIC.KEY=VALUE"),
    ("faithfulness.beta=1", "unknown option(s) beta for metric faithfulness"),
    ("factual_correctness.beta=2", "options for metric(s) not chosen"),
])
def test_cli_bad_metric_option_exits_2(tmp_path, option, fragment):
    data = write_jsonl(tmp_path / "d.jsonl", [{**RAGAS_ROW, "id": "q1"}])
    metrics = "faithfulness" if option.startswith("faith") else "answer_correctness"
    r = cli("eval", data, *FAST, "-m", metrics, "--metric-option", option)
    assert r.exit_code == 2 and fragment in r.output, r.output


def test_cli_language_override_and_config(tmp_path, monkeypatch):
    data = write_jsonl(tmp_path / "d.jsonl", [{**RAGAS_ROW, "id": "q1"}])
    out = tmp_path / "r.json"
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--language", "zh", "--out", out)
    assert r.exit_code == 0, r.output
    stored = json.loads(out.read_text())
    assert stored["meta"]["language"] == "zh"
    assert stored["samples"][0]["metrics"]["faithfulness"]["evidence"]["language"] == "zh"
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--language", "fr")
    assert r.exit_code == 2
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localragas.toml").write_text(
        'language = "zh"\nmetrics = ["answer_correctness"]\n'
        '[metric_options.answer_correctness]\nweights = [0.5, 0.5]\n')
    r = cli("eval", data, *FAST, "--out", out)
    assert r.exit_code == 0, r.output
    stored = json.loads(out.read_text())
    assert stored["meta"]["language"] == "zh" and stored["metrics"] == ["answer_correctness"]
    assert stored["meta"]["metric_options"]["answer_correctness"]["weights"] == [0.5, 0.5]


def test_merge_refuses_shards_run_in_different_languages_or_metric_options(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{**RAGAS_ROW, "id": f"q{i}"} for i in range(4)])
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    base = ["-m", "answer_correctness", "--metric-option", "answer_correctness.beta=2"]
    assert cli("eval", data, *FAST, *base, "--shard", "1/2", "--out", a).exit_code == 0
    assert cli("eval", data, *FAST, *base, "--shard", "2/2", "--language", "zh", "--out", b).exit_code == 0
    r = cli("merge", a, b)
    assert r.exit_code == 2 and "differ in language" in r.output
    assert cli("eval", data, *FAST, "-m", "answer_correctness", "--shard", "2/2", "--out", c).exit_code == 0
    r = cli("merge", a, c)
    assert r.exit_code == 2 and "differ in metric options" in r.output
    assert cli("eval", data, *FAST, *base, "--shard", "2/2", "--out", c).exit_code == 0
    merged = tmp_path / "m.json"
    assert cli("merge", a, c, "--out", merged).exit_code == 0
    assert json.loads(merged.read_text())["meta"]["metric_options"]["answer_correctness"]["beta"] == 2.0
