"""`localragas eval --mlflow` (and `mlflow = true` in the settings file): the run logged to a real MLflow store in
tmp_path after the reports are written, read back with MLflow's own client; a missing package stops the run before
judging; a tracking error never turns a failed gate into another code, and never lets a passing run exit 0."""
from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from localragas import Report

from cli_helpers import cli, sample_rows, write_file, write_jsonl
from stub_server import silent_server

mlflow = pytest.importorskip("mlflow")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"
FAKE = ("--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress")


@pytest.fixture
def store(tmp_path, monkeypatch) -> str:
    """MLflow's SQLite store in tmp_path, as MLFLOW_TRACKING_URI names it (artifacts beside it, in tmp_path)."""
    monkeypatch.chdir(tmp_path)  # MLflow puts a SQLite store's artifacts in ./mlruns
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri


def test_eval_mlflow_logs_the_run_and_its_written_reports(store, tmp_path):
    out, html = tmp_path / "report.json", tmp_path / "report.html"
    r = cli("eval", EXAMPLES, *FAKE, "--out", out, "--html", html, "--mlflow", "--mlflow-experiment", "rag quality",
            "--mlflow-run-name", "pr 42")
    assert r.exit_code == 1, r.output  # the examples fail answer relevancy with the fake judge: the gate's code kept
    assert "logged to MLflow: run " in r.output
    report = Report.model_validate_json(out.read_text(encoding="utf-8"))
    client = mlflow.MlflowClient(store)
    [run] = client.search_runs([client.get_experiment_by_name("rag quality").experiment_id])
    assert run.info.run_name == "pr 42" and run.info.status == "FINISHED"
    assert run.data.tags["localragas.gate"] == "failed" and run.data.metrics["gate/passed"] == 0
    for s in report.summary:
        assert run.data.metrics[f"{s.metric}/mean"] == pytest.approx(s.mean)
    assert run.data.params["dataset"] == str(EXAMPLES) and run.data.params["judge"] == "fake"
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id, "localragas")) == \
        ["localragas/report.html", "localragas/report.json"]  # the files eval wrote, as written
    logged = Path(client.download_artifacts(run.info.run_id, "localragas/report.json", str(tmp_path / "back")))
    assert logged.read_bytes() == out.read_bytes()


def test_mlflow_true_in_a_named_eval_logs_it_tagged_with_its_name(store, tmp_path):
    write_jsonl(tmp_path / "d.jsonl", sample_rows(2))
    write_file(tmp_path, "localragas.toml", 'judge = "fake"\nembedder = "fake"\nmetrics = ["faithfulness"]\n'
                                            '[evals.nightly]\ndata = "d.jsonl"\nmlflow = true\n'
                                            'mlflow_experiment = "nightly"\n')
    r = cli("eval", "--eval", "nightly", "--no-cache", "--no-resume", "--no-progress")
    assert r.exit_code == 0, r.output
    client = mlflow.MlflowClient(store)
    [run] = client.search_runs([client.get_experiment_by_name("nightly").experiment_id])
    assert run.data.tags["localragas.eval"] == "nightly" and run.data.tags["localragas.gate"] == "passed"
    assert run.info.run_name == "localragas d" and run.data.metrics["faithfulness/scored"] == 2
    assert [a.path for a in client.list_artifacts(run.info.run_id, "localragas")] == ["localragas/report.json"]
    # --no-mlflow over the file's mlflow = true: nothing more is logged
    assert cli("eval", "--eval", "nightly", "--no-mlflow", "--no-cache", "--no-resume", "--no-progress").exit_code == 0
    assert len(client.search_runs([client.get_experiment_by_name("nightly").experiment_id])) == 1


def test_without_mlflow_eval_mlflow_exits_2_before_judging(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # `import mlflow` raises ImportError
    r = cli("eval", EXAMPLES, *FAKE, "--out", tmp_path / "report.json", "--mlflow")
    assert r.exit_code == 2 and 'logging to MLflow needs the mlflow package: pip install "localragas[mlflow]"' in \
        r.output
    assert not (tmp_path / "report.json").exists() and "samples" not in r.output  # nothing judged, nothing written


@pytest.mark.parametrize("threshold, code", [("answer_relevancy=0.1", 2), ("answer_relevancy=0.9", 1)])
def test_a_tracking_error_exits_2_on_a_passed_gate_and_leaves_a_failed_gates_code(store, tmp_path, threshold, code):
    """The store opens (the check before judging passes), then logging the run fails: MLflow's artifact folder
    (./mlruns beside a SQLite store) is a file. One line, no traceback, and a failed gate's 1 stays 1."""
    (tmp_path / "mlruns").write_text("in the way\n")
    out = tmp_path / "report.json"
    r = cli("eval", EXAMPLES, *FAKE, "-m", "faithfulness,answer_relevancy", "-t", threshold, "--out", out, "--mlflow")
    assert r.exit_code == code, r.output
    assert "Error: MLflow could not log the run to sqlite:///" in r.output and "logged to MLflow" not in r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    assert out.exists()  # the reports are written before the run is logged
    [run] = mlflow.MlflowClient(store).search_runs(["0"])
    assert run.info.status == "FAILED"


def _listener(accept: bool) -> tuple[int, object]:
    """A port on 127.0.0.1: nothing listening (accept False), or a server that accepts and never says a word."""
    if accept:
        return silent_server()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.close()
    return port, None


@pytest.mark.parametrize("server", ["nothing listening", "accepts and says nothing"])
def test_an_unreachable_tracking_server_exits_2_naming_it_before_judging_and_within_seconds(tmp_path, monkeypatch,
                                                                                            server):
    from localragas.integrations import mlflow as bridge  # noqa: PLC0415

    monkeypatch.setattr(bridge, "CHECK_SECONDS", 3)  # 10 s by default: a test need not wait that long
    port, listener = _listener(server != "nothing listening")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    out = tmp_path / "report.json"
    started = time.monotonic()
    try:
        r = cli("eval", EXAMPLES, *FAKE, "--out", out, "--mlflow")
    finally:
        if listener is not None:
            listener.close()
    assert r.exit_code == 2, r.output
    assert f"Error: MLflow could not open the tracking store http://127.0.0.1:{port}: " in r.output
    assert ("no answer within 3 s" in r.output) == (server != "nothing listening")
    assert time.monotonic() - started < 15  # not MLflow's minutes of retries
    assert not out.exists() and "faithfulness" not in r.output  # nothing judged, nothing written


@pytest.mark.parametrize("uri", ["sqlite:////proc/nope/x.db", "sqlite:////proc/x.db", "folder store refused"])
@pytest.mark.parametrize("threshold", ["answer_relevancy=0.1", "answer_relevancy=0.9"])
def test_a_store_that_cannot_be_opened_exits_2_naming_it_before_judging(tmp_path, monkeypatch, uri, threshold):
    """A SQLite store in a folder no file can be created in (missing and not creatable, or read-only), and a folder
    store MLflow 3 refuses: found before the judging, whatever the gate would have said, in seconds, not after
    MLflow's 100 s of retries; one line, no traceback."""
    monkeypatch.chdir(tmp_path)
    if uri == "folder store refused":
        monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
        uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    out = tmp_path / "report.json"
    started = time.monotonic()
    r = cli("eval", EXAMPLES, *FAKE, "-m", "faithfulness,answer_relevancy", "-t", threshold, "--out", out, "--mlflow")
    assert r.exit_code == 2, r.output
    assert uri in r.output and r.output.startswith("Error: MLflow ") and len(r.output.splitlines()) == 1
    assert "MLFLOW_TRACKING_URI" in r.output or "MLFLOW_ALLOW_FILE_STORE" in r.output  # the fix
    assert time.monotonic() - started < 20
    assert not out.exists()


def test_eval_labels_mlflow_logs_the_spot_checks_figures(store, tmp_path):
    from spot_helpers import label_items  # noqa: PLC0415

    first = tmp_path / "first.json"
    assert cli("eval", EXAMPLES, *FAKE, "-m", "faithfulness", "--out", first).exit_code in (0, 1)
    labels = tmp_path / "labels.jsonl"
    report = Report.model_validate_json(first.read_text(encoding="utf-8"))
    label_items(report, labels, ("faithfulness",), n=14, answer=lambda x: int(x.orders[0] % 3 != 0))
    out = tmp_path / "checked.json"
    r = cli("eval", EXAMPLES, *FAKE, "-m", "faithfulness", "--labels", labels, "--out", out, "--mlflow")
    assert r.exit_code in (0, 1), r.output
    block = Report.model_validate_json(out.read_text(encoding="utf-8")).spot_checks.metrics["faithfulness"]
    client = mlflow.MlflowClient(store)
    [run] = client.search_runs([client.get_experiment_by_name("Default").experiment_id])
    logged = run.data.metrics
    assert logged["spot_checks/faithfulness/labelled"] == block.draws == 14
    assert logged["spot_checks/faithfulness/ppi_mean"] == pytest.approx(block.ppi_mean.mean)
    assert logged["spot_checks/faithfulness/ppi_ci_low"] == pytest.approx(block.ppi_mean.ci_low)
    assert logged["spot_checks/faithfulness/judge_mean"] == pytest.approx(block.judge_mean.mean)
    assert logged["spot_checks/faithfulness/accuracy"] == pytest.approx(block.accuracy.value)
