"""localragas.integrations.mlflow against a real MLflow store in tmp_path, read back with MLflow's own client."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localragas import Report, Sample, evaluate
from localragas.core.errors import MissingDependencyError, TrackingError
from localragas.judges.fake import FakeJudge

mlflow = pytest.importorskip("mlflow")
from localragas.integrations.mlflow import log_report, scorers  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"


@pytest.fixture(scope="module")
def report() -> Report:
    """The 16 examples scored by the fake judge: answer relevancy fails the gate (0.325 < 0.75). With the dataset's
    path and sha256 in meta, as `localragas eval` records them."""
    report = evaluate(EXAMPLES, judge="fake", embedder="fake", cache=False, progress=False)
    report.meta.update(dataset=str(EXAMPLES), dataset_sha256="5f69bec1")
    return report


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    """A file store in tmp_path: MLflow 3 keeps its folder store behind MLFLOW_ALLOW_FILE_STORE."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    return (tmp_path / "mlruns").as_uri()


@pytest.fixture
def fluent_uri(store):
    """mlflow.set_tracking_uri(store) for one test (MLflow's fluent API holds it globally)."""
    before = mlflow.get_tracking_uri() if mlflow.is_tracking_uri_set() else None
    mlflow.set_tracking_uri(store)
    yield store
    mlflow.set_tracking_uri(before)


def _artifacts(client, run_id: str) -> list[str]:
    return sorted(a.path for a in client.list_artifacts(run_id, "localragas"))


def test_a_run_is_logged_and_reads_back_with_mlflows_client(report, store, tmp_path):
    run_id = log_report(report, tracking_uri=store, experiment="rag quality", tags={"branch": "main"})

    client = mlflow.MlflowClient(store)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "localragas rag_samples"
    assert client.get_experiment(run.info.experiment_id).name == "rag quality"
    metrics, params, tags = run.data.metrics, run.data.params, run.data.tags
    for s in report.summary:
        assert metrics[f"{s.metric}/mean"] == pytest.approx(s.mean)
        assert (metrics[f"{s.metric}/ci_low"], metrics[f"{s.metric}/ci_high"]) == pytest.approx((s.ci_low, s.ci_high))
        assert (metrics[f"{s.metric}/scored"], metrics[f"{s.metric}/unscored"]) == (s.scored, s.unscored)
        assert metrics[f"{s.metric}/errors"] == 0
    assert (metrics["context_recall/scored"], metrics["context_recall/unscored"]) == (12, 4)  # 4 have no reference
    assert metrics["samples"] == 16 and metrics["gate/passed"] == 0
    assert tags["localragas.gate"] == "failed" and tags["branch"] == "main"
    assert tags["localragas.gate.answer_relevancy"] == "failed" and tags["localragas.gate.faithfulness"] == "passed"
    assert params["judge"] == "fake" and params["judge.fingerprint"] == "fake:fake"
    assert params["calibration"] == "none" and params["embedder"] == "fake"
    assert params["threshold.answer_relevancy"] == "0.75" and params["gate_on"] == "mean"
    assert params["option.faithfulness.verdicts"] == "probability"
    assert params["metrics"] == "faithfulness,answer_relevancy,context_precision,context_recall"
    assert params["dataset_sha256"] == "5f69bec1" and params["dataset"] == str(EXAMPLES)
    # the JSON and HTML reports are the run's artifacts; the JSON one is the report itself
    assert _artifacts(client, run_id) == ["localragas/report.html", "localragas/report.json"]
    got = Path(client.download_artifacts(run_id, "localragas/report.json", str(tmp_path)))
    assert Report.model_validate_json(got.read_text(encoding="utf-8")).summary == report.summary


def test_inside_an_active_run_it_logs_into_that_run_and_leaves_it_open(report, fluent_uri, tmp_path):
    out, md = tmp_path / "report.json", tmp_path / "summary.md"
    out.write_text(report.model_dump_json(), encoding="utf-8")
    md.write_text("# summary\n", encoding="utf-8")
    with mlflow.start_run(run_name="my pipeline") as active:
        mlflow.log_param("retriever", "bm25")
        run_id = log_report(report, report_paths={"out": out, "html": None, "md": md})  # as eval's flags give them
        assert mlflow.active_run().info.run_id == run_id == active.info.run_id
    run = mlflow.MlflowClient().get_run(run_id)
    assert run.info.run_name == "my pipeline" and run.data.params["retriever"] == "bm25"
    assert run.data.params["judge"] == "fake" and run.data.metrics["faithfulness/mean"] == pytest.approx(
        report.summary_for("faithfulness").mean)
    assert _artifacts(mlflow.MlflowClient(), run_id) == ["localragas/report.json", "localragas/summary.md"]


def test_the_json_report_is_logged_beside_written_files_that_hold_none(report, store, tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("# summary\n", encoding="utf-8")
    run_id = log_report(report, [md], tracking_uri=store, run_name="nightly")
    client = mlflow.MlflowClient(store)
    assert client.get_run(run_id).info.run_name == "nightly"
    assert _artifacts(client, run_id) == ["localragas/report.json", "localragas/summary.md"]


def test_a_report_written_to_a_stream_is_logged_as_the_json_written_again(report, store, tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("# summary\n", encoding="utf-8")
    pipe = tmp_path / "report-pipe"  # as --out /dev/stdout is when the output is piped on
    os.mkfifo(pipe)
    run_id = log_report(report, {"out": pipe, "md": md}, tracking_uri=store)
    assert _artifacts(mlflow.MlflowClient(store), run_id) == ["localragas/report.json", "localragas/summary.md"]


def test_a_missing_report_file_is_named_and_the_started_run_marked_failed(report, store, tmp_path):
    with pytest.raises(TrackingError, match="no such file to log to MLflow: .*junit.xml"):
        log_report(report, {"junit": tmp_path / "junit.xml"}, tracking_uri=store, experiment="e")
    client = mlflow.MlflowClient(store)
    [run] = client.search_runs([client.get_experiment_by_name("e").experiment_id])
    assert run.info.status == "FAILED"


def test_a_store_mlflow_refuses_is_named_with_the_fix(report, tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    uri = (tmp_path / "mlruns").as_uri()
    with pytest.raises(TrackingError) as e:
        log_report(report, tracking_uri=uri)
    assert f"could not open the tracking store {uri}" in str(e.value)
    assert "MLFLOW_ALLOW_FILE_STORE" in str(e.value)  # MLflow's own advice, passed on
    assert 'pip install "localragas[mlflow]"' in str(e.value)


def test_a_store_in_a_folder_that_cannot_be_made_is_a_tracking_error_naming_it(report):
    """MLflow's own OSError (it makes a SQLite store's folders) comes out as TrackingError naming the store, at once
    (no 100 s of MLflow's retries), never as an OSError or a traceback."""
    started = time.monotonic()
    with pytest.raises(TrackingError, match=r"could not open the tracking store sqlite:////proc/nope/x\.db: "):
        log_report(report, tracking_uri="sqlite:////proc/nope/x.db")
    assert time.monotonic() - started < 20


def test_without_mlflow_the_error_names_the_install_command(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # `import mlflow` raises ImportError
    with pytest.raises(MissingDependencyError, match=r'pip install "localragas\[mlflow\]"'):
        log_report(report)
    with pytest.raises(MissingDependencyError, match=r'pip install "localragas\[mlflow\]"'):
        scorers(["faithfulness"], judge="fake")


def test_mlflows_usage_reports_are_off_before_it_is_imported(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_DISABLE_TELEMETRY", "PYTEST_CURRENT_TEST", "CI")}
    code = ("import os, sys; from localragas.integrations import mlflow as m; m.import_mlflow(); "
            "from mlflow.telemetry.client import get_telemetry_client; "
            "print(os.environ['MLFLOW_DISABLE_TELEMETRY'], get_telemetry_client())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["true", "None"]


# --- the metrics as MLflow GenAI scorers -------------------------------------------------------------------------

ROW = {"inputs": {"question": "What is the capital of France?"},
       "outputs": {"answer": "Paris is the capital of France. It has the Louvre.",
                   "contexts": ["Paris is the capital and largest city of France."]},
       "expectations": {"expected_response": "The capital of France is Paris."}}


def test_a_scorer_gives_the_score_evaluate_gives_and_asks_the_judge_about_the_row():
    judge = FakeJudge()
    faithfulness, recall = scorers(["faithfulness", "context_recall"], judge=judge, cache=False)
    assert (faithfulness.name, recall.name) == ("faithfulness", "context_recall")
    got = faithfulness(**ROW)
    asked = [p.text() for p in judge.asked("verify_statement")]
    assert any("It has the Louvre." in a for a in asked) and any("largest city of France" in a for a in asked)
    sample = Sample(question=ROW["inputs"]["question"], answer=ROW["outputs"]["answer"],
                    contexts=ROW["outputs"]["contexts"], reference=ROW["expectations"]["expected_response"])
    direct = evaluate([sample], metrics=["faithfulness", "context_recall"], judge=FakeJudge(), cache=False,
                      progress=False).samples[0].metrics
    assert got.value == pytest.approx(direct["faithfulness"].value) and got.rationale
    assert recall(**ROW).value == pytest.approx(direct["context_recall"].value)
    # a row without the data a metric needs: no value, the reason said, not an error
    missing = recall(inputs="What is the capital of France?", outputs=ROW["outputs"])
    assert missing.value is None and missing.rationale == "no_reference" and missing.error is None


def test_the_scorers_run_in_mlflow_genai_evaluate(fluent_uri):
    rows = [ROW, {**ROW, "outputs": {**ROW["outputs"], "answer": "Berlin is the capital of France."}}]
    result = mlflow.genai.evaluate(data=rows, scorers=scorers(["faithfulness"], judge=FakeJudge(), cache=False))
    samples = [Sample(question=r["inputs"]["question"], **r["outputs"]) for r in rows]
    expected = evaluate(samples, metrics=["faithfulness"], judge=FakeJudge(), cache=False, progress=False)
    assert result.metrics["faithfulness/mean"] == pytest.approx(expected.summary_for("faithfulness").mean)
    assert mlflow.MlflowClient().get_run(result.run_id).info.status == "FINISHED"
    json.dumps(result.metrics, default=float)  # plain numbers


def test_the_docs_examples_run(tmp_path, report, store):
    """docs/mlflow.md's Python blocks, run as a user would, logging to a folder store in tmp_path."""
    import re

    from localragas.report import write_json, write_markdown
    from localragas.report.html_report import write_html

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "mlflow.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 3
    uri = store
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri, "MLFLOW_ALLOW_FILE_STORE": "true", "PYTHONPATH": str(ROOT),
           "LOCALRAGAS_STATE_DIR": str(tmp_path / "state")}
    write_json(report, tmp_path / "report.json")
    write_html(report, tmp_path / "report.html")
    write_markdown(report, tmp_path / "summary.md")
    # one interpreter (mlflow's import is the slow part), each block in its own namespace and working folder
    program = "import os\n" + "".join(f"os.chdir({str(cwd)!r})\nexec({block!r}, {{}})\n"
                                       for block, cwd in zip(blocks, (ROOT, tmp_path, ROOT)))
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    logged = [r for r in runs if "localragas.gate" in r.data.tags]
    assert len(logged) == 2 and {r.data.tags["localragas.gate"] for r in logged} == {"failed"}
    assert {r.data.tags.get("branch") for r in logged} == {"main", None}
    scored = [r for r in runs if "faithfulness/mean" in r.data.metrics and "localragas.gate" not in r.data.tags]
    assert [(r.data.metrics["faithfulness/mean"], r.data.metrics["context_recall/mean"]) for r in scored] == [(1, 1)]
