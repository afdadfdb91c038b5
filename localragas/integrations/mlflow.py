"""MLflow: a finished run logged to MLflow tracking (`log_report`), and localragas's metrics as MLflow GenAI scorers
(`scorers`). Installed by `pip install "localragas[mlflow]"` (mlflow-skinny, with SQLAlchemy and Alembic for MLflow's
default local store); docs/mlflow.md. MLflow is imported inside the functions: `import localragas` never loads it."""
from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .. import __version__
from ..core.errors import MissingDependencyError, TrackingError, environment_message
from ..core.offline import ensure_offline
from ..data.schema import Report

INSTALL = 'pip install "localragas[mlflow]"'
ARTIFACTS = "localragas"  # the run's artifact folder the reports go in
# a run of conversations: its turns and its conversations as MLflow tables (artifacts MLflow's UI shows as tables)
TABLES = {"turns": f"{ARTIFACTS}/turns.json", "conversations": f"{ARTIFACTS}/conversations.json"}
_PER_CALL = 100  # MLflow's log_batch takes at most 100 params and 100 tags (1000 metrics) a call
_PARAM_CHARS = 6000  # MLflow's longest param value
CHECK_SECONDS = 10  # eval --mlflow's check, before judging: a remote tracking store must answer within this
_LOCAL_SCHEMES = ("", "file", "sqlite")  # stores on this machine: checked by their path, no deadline


def import_mlflow() -> Any:
    """The mlflow module, with its usage reports off; MissingDependencyError naming the install command without it.
    A caller about to run a long evaluation and log it (eval --mlflow) calls check_store first, to fail before
    judging."""
    ensure_offline()  # MLFLOW_DISABLE_TELEMETRY before mlflow's import starts its usage reporting
    try:
        import mlflow  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(f"logging to MLflow needs the mlflow package: {INSTALL}") from None
    return mlflow


def check_store(tracking_uri: str | None = None, seconds: float | None = None) -> str:
    """The tracking store opened and read once (`eval --mlflow` calls it before any judging), so that a store that is
    down, silent, refused or unwritable stops the run at once, not after the judging or minutes of MLflow's retries:
    TrackingError naming the store. A SQLite file's folder must be writable (tried directly: MLflow would retry an
    unwritable one for 100 s); a local store is then opened without a deadline (created on first use, which takes
    a few seconds); a remote one (a tracking server, a database) is asked once, without MLflow's HTTP retries, and
    must answer within `seconds` (default CHECK_SECONDS). Returns the store's URI."""
    seconds = CHECK_SECONDS if seconds is None else seconds
    mlflow = import_mlflow()
    uri = tracking_uri or mlflow.get_tracking_uri()
    scheme = urlparse(uri).scheme.lower()
    if scheme == "sqlite":
        _check_sqlite_folder(uri)

    def read() -> None:
        mlflow.MlflowClient(uri).search_experiments(max_results=1)

    try:
        if scheme in _LOCAL_SCHEMES or len(scheme) == 1:  # a Windows drive letter is a path too
            read()
        else:
            _within(seconds, read, uri, {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",  # its own timeout after ours
                                         "MLFLOW_HTTP_REQUEST_TIMEOUT": str(int(seconds) + 5)})
    except TrackingError:
        raise
    except Exception as e:  # noqa: BLE001 - MLflow's, SQLAlchemy's or the OS's: each is the store's problem
        raise TrackingError(_store_error(uri, e)) from None
    return uri


def _check_sqlite_folder(uri: str) -> None:
    """A SQLite store's file must be a file, and the folder it is (or would be created) in writable: SQLite writes
    its journal beside it. Tried by creating a file there (permissions, read-only and special file systems alike)."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415 - installed with the extra

    database = make_url(uri).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database).expanduser().absolute()
    fix = "set MLFLOW_TRACKING_URI to a store in a folder you can write (sqlite:////PATH/mlflow.db)"
    if path.exists() and not path.is_file():
        raise TrackingError(f"MLflow cannot use the SQLite store {uri}: {path} is not a file; {fix}")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # MLflow creates the missing folders
        folder = folder.parent
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".localragas-check-"):
            pass
    except OSError as e:
        raise TrackingError(f"MLflow cannot write its SQLite store {uri}: no file can be created in {folder} "
                            f"({e.strerror or type(e).__name__}); {fix}") from None


def _within(seconds: float, call: Callable[[], None], uri: str, environ: dict[str, str]) -> None:
    """`call` in a thread of its own, with `environ` set while it starts (MLflow reads its HTTP settings then);
    TrackingError when it has not returned within `seconds` (the thread is left to end at its own timeout)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(e)

    before = {k: os.environ.get(k) for k in environ}
    os.environ.update(environ)
    try:
        worker = threading.Thread(target=run, name="localragas-mlflow-check", daemon=True)
        worker.start()
        worker.join(seconds)
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    if not outcome:
        raise TrackingError(_store_error(uri, f"no answer within {seconds:g} s (is the server up, and is this its "
                                              "address?)"))
    if outcome[0] is not None:
        raise outcome[0]


def _store_error(uri: str, error: Any) -> str:
    why = error if not isinstance(error, BaseException) or str(error) else type(error).__name__
    return (f"MLflow could not open the tracking store {uri}: {why}. Set the tracking URI (MLFLOW_TRACKING_URI, "
            f"mlflow.set_tracking_uri or tracking_uri=) to your tracking server, or keep MLflow's local default "
            f"(sqlite:///mlflow.db) with {INSTALL}")


def _key(name: str) -> str:
    """A metric name as an MLflow key: letters, digits, _ - . / and space are kept, anything else becomes _."""
    return re.sub(r"[^\w\-./ ]", "_", name)


def gate_verdict(report: Report) -> str:
    """passed / failed / could_not_evaluate (a metric's errors beyond --max-error-rate: exit 4) / off (--no-gate):
    the `localragas.gate` tag, the same order of precedence as the command line's exit code."""
    if not report.gate.evaluated:
        return "could_not_evaluate"
    if not report.gate.enabled:
        return "off"
    return "passed" if report.gate.passed else "failed"


def run_metrics(report: Report) -> dict[str, float]:
    """Each metric's mean and interval (<metric>/mean, /ci_low, /ci_high; an absent value is left out) and counts
    (/scored, /unscored, /errors), the samples and skipped rows, the conversations and turns of a run of conversations,
    and gate/passed (1 or 0) when the gate is on."""
    out: dict[str, float] = {}
    for s in report.summary:
        key = _key(s.metric)
        for field in ("mean", "ci_low", "ci_high"):
            if getattr(s, field) is not None:
                out[f"{key}/{field}"] = float(getattr(s, field))
        out.update({f"{key}/scored": s.scored, f"{key}/unscored": s.unscored, f"{key}/errors": s.errors})
    out.update(spot_check_metrics(report))
    out["samples"] = len(report.samples)
    if counts := report.meta.get("conversations"):
        out.update({"conversations": counts["conversations"], "turns": counts["turns"]})
    out["skipped_rows"] = len(report.skipped)
    if report.gate.enabled:
        out["gate/passed"] = 1.0 if gate_verdict(report) == "passed" else 0.0
    return out


def spot_check_metrics(report: Report) -> dict[str, float]:
    """People's spot checks (report.spot_checks), per checked metric under spot_checks/<metric>/: the three means and
    their intervals (ppi_mean, ppi_ci_low, ppi_ci_high; judge_mean, ...; labels_mean, ...), effective_labels, the
    judge against the people (accuracy, balanced_accuracy, roc_auc, bias), the counts (labelled: draws the means rest
    on; skipped, disagreements) and kappa; an absent value is left out."""
    out: dict[str, float] = {}
    checks = report.spot_checks
    for name, c in (checks.metrics.items() if checks is not None else ()):
        key = f"spot_checks/{_key(name)}"
        values: dict[str, float | None] = {"labelled": c.draws, "skipped": c.skipped,
                                           "disagreements": c.disagreements, "kappa": c.kappa, "bias": c.bias,
                                           "effective_labels": c.ppi_mean.effective_labels}
        for mean in ("ppi", "judge", "labels"):
            got = getattr(c, f"{mean}_mean")
            values.update({f"{mean}_mean": got.mean, f"{mean}_ci_low": got.ci_low, f"{mean}_ci_high": got.ci_high})
        for figure in ("accuracy", "balanced_accuracy", "roc_auc"):
            values[figure] = getattr(c, figure).value
        out.update({f"{key}/{k}": float(v) for k, v in values.items() if v is not None})
    return out


def run_params(report: Report) -> dict[str, str]:
    """The run's settings: judge, its fingerprint and calibration, embedder, metrics, each metric's options
    (option.<metric>.<name>) and threshold (threshold.<metric>), the gate's rule, the dataset and its sha256."""
    meta = report.meta
    judge = meta.get("judge") or {}
    calibration = meta.get("calibration") or {}
    thresholds = {**(meta.get("thresholds") or {}), **{r.metric: r.threshold for r in report.gate.results}}
    params: dict[str, Any] = {
        "judge": judge.get("name"), "judge.fingerprint": judge.get("fingerprint"),
        "calibration": calibration.get("source", "none"), "calibration.sha256": calibration.get("sha256"),
        "uncalibrated": ",".join(meta.get("uncalibrated") or []) or None,
        "embedder": (meta.get("embedder") or {}).get("name"),
        "metrics": ",".join(report.metrics),
        "gate_on": report.gate.on, "max_error_rate": report.gate.max_error_rate,
        "language": meta.get("language"), "ci.level": (meta.get("ci") or {}).get("level"),
        "dataset": meta.get("dataset"), "dataset_sha256": meta.get("dataset_sha256"),
        "localragas.version": meta.get("localragas", __version__),
    }
    for metric, options in (meta.get("metric_options") or {}).items():
        params.update({f"option.{_key(metric)}.{_key(k)}": v for k, v in options.items()})
    params.update({f"threshold.{_key(m)}": t for m, t in thresholds.items()})
    return {k: str(v)[:_PARAM_CHARS] for k, v in params.items() if v is not None}


def run_tags(report: Report) -> dict[str, str]:
    """localragas.gate (gate_verdict) and localragas.gate.<metric>: each metric's gate status."""
    tags = {"localragas.gate": gate_verdict(report), "localragas.version": str(report.meta.get("localragas", ""))}
    tags.update({f"localragas.gate.{_key(r.metric)}": r.status for r in report.gate.results})
    return tags


def conversation_tables(report: Report) -> dict[str, Any]:
    """A run of conversations' tables (pandas DataFrames), by TABLES's names: `turns`, a row per turn (id, category,
    conversation, turn, each metric's value and unscored reason: Report.to_pandas() without the text) and
    `conversations`, a row per conversation (Report.conversations_frame()); none for a run of single samples."""
    from ..data.conversation_summary import has_conversations  # noqa: PLC0415

    if not has_conversations(report):
        return {}
    turns = report.to_pandas()
    turns = turns[["id", "category", "conversation", "turn", *report.metrics,
                   *(f"{m}_unscored" for m in report.metrics)]]
    return {"turns": turns, "conversations": report.conversations_frame()}


def _report_files(report: Report, report_paths: Mapping[str, Any] | Iterable[Any] | None, folder: Path) -> list[Path]:
    """The files to log: the ones given (a mapping's values, as the command line's output flags give them: None and
    streams such as /dev/stdout left out), else the JSON and HTML reports written into `folder`. A JSON report is
    always among them: from it `localragas report` writes every other format again."""
    if report_paths is None:
        from ..report.html_report import write_html  # noqa: PLC0415

        write_html(report, folder / "report.html")
        given: list[Path] = [folder / "report.html"]
    else:
        values = report_paths.values() if isinstance(report_paths, Mapping) else report_paths
        # a report written to a stream (--out /dev/stdout, a pipe) is no file to log: the JSON is written again below
        given = [Path(p) for p in values if p is not None and not (Path(p).exists() and not Path(p).is_file())]
        missing = [str(p) for p in given if not p.is_file()]
        if missing:
            raise TrackingError(f"report_paths: no such file to log to MLflow: {', '.join(missing)}")
    if not any(p.suffix.lower() == ".json" for p in given):
        from ..report import write_json  # noqa: PLC0415

        write_json(report, folder / "report.json")
        given.insert(0, folder / "report.json")
    return given


def _open_run(mlflow: Any, tracking_uri: str | None, experiment: str | None, run_name: str | None,
              tags: dict[str, str]) -> tuple[Any, str, bool]:
    """(client, run id, whether this call started the run). The active run when there is one (and no other
    tracking URI is named), else a new run in `experiment` (created when missing; default: the one MLflow would
    use, mlflow.set_experiment or MLFLOW_EXPERIMENT_NAME / _ID, else its Default)."""
    uri = tracking_uri or mlflow.get_tracking_uri()
    try:
        active = mlflow.active_run()
        if active is not None and (tracking_uri is None or tracking_uri == mlflow.get_tracking_uri()):
            return mlflow.MlflowClient(), active.info.run_id, False
        client = mlflow.MlflowClient(tracking_uri)
        if experiment is not None:
            found = client.get_experiment_by_name(experiment)
            experiment_id = found.experiment_id if found else client.create_experiment(experiment)
        elif tracking_uri is None:
            from mlflow.tracking.fluent import _get_experiment_id  # noqa: PLC0415

            experiment_id = _get_experiment_id()
        else:
            experiment_id = "0"  # MLflow's Default experiment, in every store
        run = client.create_run(experiment_id, run_name=run_name, tags=tags)
    except Exception as e:  # noqa: BLE001 - MLflow's, SQLAlchemy's or the OS's (a folder it cannot create)
        raise TrackingError(_store_error(uri, e)) from e
    return client, run.info.run_id, True


def log_report(report: Report, report_paths: Mapping[str, Any] | Iterable[Any] | None = None, *,
               tracking_uri: str | None = None, experiment: str | None = None, run_name: str | None = None,
               tags: Mapping[str, str] | None = None) -> str:
    """Log a finished run to MLflow tracking and return the MLflow run id.

    Metrics: each metric's <metric>/mean, /ci_low, /ci_high and counts, gate/passed; params: the judge, its
    fingerprint and calibration, the metric options and thresholds (run_params); tags: localragas.gate (passed,
    failed, could_not_evaluate, off) and each metric's gate status; artifacts (folder `localragas`): the files in
    report_paths (the written reports: a list, or the command line's {"out": …, "html": …} with None for a format
    not written), else the JSON and HTML reports; a run of conversations also its turns and conversations as
    MLflow tables (conversation_tables: localragas/turns.json, localragas/conversations.json). Inside an active
    MLflow run it logs into that run (left open); else it starts one in `experiment`, named `run_name` (default:
    "localragas <dataset file stem>"), tagged with `tags`, and ends it. tracking_uri: default the one the user set (mlflow.set_tracking_uri, MLFLOW_TRACKING_URI),
    else MLflow's own local default (sqlite:///mlflow.db and ./mlruns, as `mlflow ui` opens them)."""
    mlflow = import_mlflow()
    from mlflow.entities import Metric, Param, RunTag  # noqa: PLC0415

    dataset = report.meta.get("dataset")
    name = run_name or f"localragas {Path(dataset).stem if dataset else 'run'}"
    client, run_id, started = _open_run(mlflow, tracking_uri, experiment, name, dict(tags or {}))
    now = int(time.time() * 1000)
    metrics = [Metric(k, v, now, 0) for k, v in run_metrics(report).items()]
    params = [Param(k, v) for k, v in run_params(report).items()]
    all_tags = [RunTag(k, v) for k, v in {**run_tags(report), **(tags or {})}.items()]
    try:
        for i in range(0, max(len(metrics), len(params), len(all_tags)), _PER_CALL):
            client.log_batch(run_id, metrics=metrics[i:i + _PER_CALL], params=params[i:i + _PER_CALL],
                             tags=all_tags[i:i + _PER_CALL])
        with tempfile.TemporaryDirectory(prefix="localragas-mlflow-") as folder:
            for path in _report_files(report, report_paths, Path(folder)):
                client.log_artifact(run_id, str(path), ARTIFACTS)
        for name, table in conversation_tables(report).items():
            client.log_table(run_id, data=table, artifact_file=TABLES[name])
    except BaseException as e:
        if started:
            _end_failed(client, run_id)
        if isinstance(e, TrackingError) or not isinstance(e, Exception):
            raise
        where = tracking_uri or mlflow.get_tracking_uri()
        problem = environment_message(e) if isinstance(e, OSError) else str(e) or type(e).__name__
        raise TrackingError(f"MLflow could not log the run to {where} (run {run_id}): {problem}") from e
    if started:
        client.set_terminated(run_id, "FINISHED")
    return run_id


def _end_failed(client: Any, run_id: str) -> None:
    """A run this call started, marked FAILED; a store that cannot even take that is left as it is (the error that
    stopped the logging is the one reported)."""
    try:
        client.set_terminated(run_id, "FAILED")
    except Exception:  # noqa: BLE001
        pass


# --- localragas's metrics as MLflow GenAI scorers (mlflow.genai.evaluate) ----------------------------------------
# MLflow's names for a row's parts -> localragas's fields (the other names Sample reads itself, data/schema.py).
EXPECTATION_NAMES = {"expected_response": "reference"}


def _row_sample(inputs: Any, outputs: Any, expectations: Any) -> Any:
    """One mlflow.genai.evaluate row as a Sample: inputs a question (a string, or a dict with `question` or
    another name Sample reads: query, user_input, input), outputs the answer (a string, or a dict with `answer` /
    `response` and the retrieved `contexts`), expectations the reference (`expected_response`, or `reference`)."""
    from ..data.schema import Sample  # noqa: PLC0415

    record: dict[str, Any] = {}
    for part, field in ((inputs, "question"), (outputs, "answer")):
        record.update(part if isinstance(part, Mapping) else ({field: part} if part is not None else {}))
    for key, value in (expectations or {}).items():
        record[EXPECTATION_NAMES.get(key, key)] = value
    return Sample.model_validate(record)


def scorers(metrics: Iterable[str] | None = None, judge: Any = None, embedder: Any = None,
            judge_options: Mapping[str, Any] | None = None, **options: Any) -> list[Any]:
    """localragas's metrics as MLflow GenAI scorers, one per metric (named as it), for
    `mlflow.genai.evaluate(data=…, scorers=scorers(["faithfulness"], judge="qwen2.5-1.5b"))`.

    metrics: names (default: localragas's default set); judge / embedder: an instance or a name, loaded once here
    and shared by every row; options: evaluate()'s other settings (metric_options, language, cache, …). Each row is
    read by _row_sample and scored by localragas.evaluate (the judge check runs once per judge); a scored metric
    gives Feedback(value, rationale: the evidence in one line), an unscored one a Feedback without a value, its
    reason as the rationale (missing data, no_reference) or as the error (a judge or embedder error)."""
    import_mlflow()
    try:
        from mlflow.entities import Feedback  # noqa: PLC0415
        from mlflow.genai.scorers import scorer  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(f"MLflow GenAI scorers need mlflow >= 3 (mlflow.genai): {INSTALL}") from None
    from ..judges.embeddings import Embedder, get_embedder  # noqa: PLC0415
    from ..judges import Judge, get_judge  # noqa: PLC0415
    from ..metrics.registry import get_metrics  # noqa: PLC0415
    from ..report.evidence import brief  # noqa: PLC0415
    from ..run.runner import evaluate  # noqa: PLC0415
    from ..data.unscored import is_error_reason  # noqa: PLC0415

    chosen = get_metrics(list(metrics) if metrics is not None else None, options.get("metric_options"))
    if not isinstance(judge, Judge):
        judge = get_judge(judge, dict(judge_options or {}))
    if any(m.uses_embedder for m in chosen) and not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)

    def one(metric: Any) -> Any:
        def score(inputs: Any = None, outputs: Any = None, expectations: Any = None) -> Any:
            report = evaluate([_row_sample(inputs, outputs, expectations)], metrics=[metric], judge=judge,
                              embedder=embedder, gate=False, progress=False, **options)
            result = report.samples[0].metrics[metric.name]
            if result.scored:
                return Feedback(name=metric.name, value=result.value,
                                rationale=brief(report.definitions[metric.name], result))
            reason = result.unscored or "unscored"
            if is_error_reason(reason):
                return Feedback(name=metric.name, value=None, error=reason)
            return Feedback(name=metric.name, value=None, rationale=reason)
        return scorer(score, name=metric.name, description=f"localragas {metric.name} ({judge.name})")

    return [one(m) for m in chosen]
