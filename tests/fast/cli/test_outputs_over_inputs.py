"""Every file a command reads is an input for the output guard: no report, comparison, test set or fitted map is
written over the run history (or its SQLite side files), a resume checkpoint, a --prompt file, the calibration file
of --judge-option calibration=FILE, a model file or the --target pipeline. Refused with exit 2 naming both paths,
before any judging, and the file is left byte for byte."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import localragas.run.prepared_run as prepared_run
from localragas.report import write_json

from cli_helpers import cli, write_jsonl
from reports_helpers import make_report

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "localragas" / "calibrations" / "qwen2.5-1.5b.json"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]


@pytest.fixture
def state(tmp_path) -> Path:
    """The state folder ($LOCALRAGAS_STATE_DIR, set per test by tests/conftest.py) with a run history in it."""
    folder = tmp_path / "state"
    (folder / "runs").mkdir(parents=True)
    (folder / "history.sqlite").write_bytes(b"SQLite format 3\x00 a history")
    return folder


@pytest.fixture
def no_judging(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("judging started before the output paths were checked")

    monkeypatch.setattr(prepared_run, "prepare", boom)


def refused(r, flag: str, output: Path, what: str, source: Path | None = None) -> None:
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert f"Error: {flag} {output} is " in said and f"{source or output} ({what})" in said, said
    assert "writing there would destroy it" in said and "Traceback" not in said


def kept(path: Path, before: bytes) -> None:
    assert path.read_bytes() == before


def calibration_refused(tmp_path: Path, *command: object, flag: str) -> None:
    """`localragas COMMAND --judge-option calibration=FILE FLAG FILE` is refused and FILE kept."""
    calibration = Path(shutil.copy(SHIPPED, tmp_path / "mine.calibration.json"))
    before = calibration.read_bytes()
    r = cli(*command, *FAST, "--judge-option", f"calibration={calibration}", flag, calibration)
    refused(r, flag, calibration, "the calibration file of --judge-option calibration")
    kept(calibration, before)


@pytest.mark.parametrize("name, flag", [("history.sqlite", "--out"), ("history.sqlite-wal", "--html"),
                                        ("history.sqlite-shm", "--csv"), ("file-hashes.json", "--md")])
def test_eval_refuses_to_write_over_the_run_history_and_its_side_files(data, state, name, flag, no_judging):
    target = state / name
    target.write_bytes(b"kept")
    before = target.read_bytes()
    r = cli("eval", data, *FAST, flag, target)
    refused(r, flag, target, "the model files' hash record" if name == "file-hashes.json" else "the run history")
    kept(target, before)


def test_eval_refuses_an_output_inside_the_checkpoints_folder(data, state, no_judging):
    checkpoint = state / "runs" / "abc.jsonl"
    checkpoint.write_text('{"hash": "x"}\n')
    r = cli("eval", data, *FAST, "--junit", checkpoint)
    assert r.exit_code == 2 and f"is inside the input folder {state / 'runs'} (the resume checkpoints' folder)" in \
        " ".join(r.output.split()), r.output
    kept(checkpoint, b'{"hash": "x"}\n')


def test_eval_refuses_to_write_over_a_prompt_file(data, tmp_path, no_judging):
    prompt = tmp_path / "verify.txt"
    prompt.write_text("Is the statement supported by the context?\n")
    before = prompt.read_bytes()
    r = cli("eval", data, *FAST, "--prompt", f"verify_statement={prompt}", "--md", prompt)
    refused(r, "--md", prompt, "the --prompt file of verify_statement")
    kept(prompt, before)


def test_eval_refuses_a_prompt_file_named_in_the_settings_file(data, tmp_path, monkeypatch, no_judging):
    """The settings file's [prompts] paths are taken from its folder: the guard compares those."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "verify.txt").write_text("Is the statement supported?\n")
    (conf / "localragas.toml").write_text('judge = "fake"\nembedder = "fake"\n[prompts]\nverify_statement = '
                                          '"verify.txt"\n')
    r = cli("eval", data, "--no-progress", "--config", conf / "localragas.toml", "--out", conf / "verify.txt")
    refused(r, "--out", conf / "verify.txt", "the --prompt file of verify_statement")
    assert (conf / "verify.txt").read_text() == "Is the statement supported?\n"


def test_eval_refuses_to_write_over_the_calibration_file(data, tmp_path, no_judging):
    calibration_refused(tmp_path, "eval", data, flag="--csv")


def test_eval_refuses_to_write_over_the_judge_model_or_inside_the_embedder_folder(data, tmp_path, no_judging):
    model = tmp_path / "judge.gguf"
    model.write_bytes(b"GGUF not really a model")
    r = cli("eval", data, "--judge", model, "--embedder", "fake", "--no-progress", "--out", model)
    refused(r, "--out", model, "the judge's model")
    kept(model, b"GGUF not really a model")
    embedder = tmp_path / "my-embedder"
    embedder.mkdir()
    r = cli("eval", data, "--judge", "fake", "--embedder", embedder, "--no-progress", "--html", embedder / "r.html")
    assert r.exit_code == 2 and f"is inside the input folder {embedder} (the embedder's model)" in \
        " ".join(r.output.split()), r.output


def test_eval_and_report_refuse_to_write_over_a_labels_file(data, tmp_path, no_judging):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"reviewer": "ana"}\n')
    r = cli("eval", data, *FAST, "--labels", labels, "--out", labels)
    refused(r, "--out", labels, "a --labels file")
    stored = tmp_path / "r.json"
    write_json(make_report({"a": {"faithfulness": 0.5}}), stored)
    r = cli("report", stored, "--labels", labels, "--md", labels)
    refused(r, "--md", labels, "a --labels file")
    kept(labels, b'{"reviewer": "ana"}\n')


def test_calibrate_refuses_the_calibration_and_prompt_files_and_the_history(tmp_path, state):
    labelled = ROOT / "examples" / "calibrate_labelled.jsonl"
    calibration_refused(tmp_path, "calibrate", labelled, flag="--fit")
    prompt = tmp_path / "p.txt"
    prompt.write_text("Supported?\n")
    r = cli("calibrate", labelled, *FAST, "--prompt", f"verify_statement={prompt}", "--out", prompt)
    refused(r, "--out", prompt, "the --prompt file of verify_statement")
    r = cli("calibrate", labelled, *FAST, "--html", state / "history.sqlite")
    refused(r, "--html", state / "history.sqlite", "the run history")
    assert prompt.read_text() == "Supported?\n"


def test_generate_refuses_the_calibration_file_and_the_history(tmp_path, state):
    docs = ROOT / "examples" / "docs"
    calibration_refused(tmp_path, "generate", docs, flag="--out")
    r = cli("generate", docs, *FAST, "--out", state / "history.sqlite")
    refused(r, "--out", state / "history.sqlite", "the run history")


def test_run_rag_refuses_the_pipeline_file_and_the_history(tmp_path, state):
    pipeline = tmp_path / "pipe.py"
    pipeline.write_text("def answer(q):\n    return {'answer': q, 'contexts': []}\n")
    before = pipeline.read_bytes()
    testset = write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "question": "q"}])
    r = cli("run-rag", testset, "--target", f"{pipeline}:answer", "--out", pipeline, "--no-progress")
    refused(r, "--out", pipeline, "the --target pipeline's file")
    kept(pipeline, before)
    r = cli("run-rag", testset, "--target", f"{pipeline}:answer", "--out", state / "history.sqlite", "--no-progress")
    refused(r, "--out", state / "history.sqlite", "the run history")


def test_report_merge_compare_and_view_refuse_the_history(tmp_path, state):
    stored = tmp_path / "r.json"
    write_json(make_report({"a": {"faithfulness": 0.5}, "b": {"faithfulness": 0.7}}), stored)
    history = state / "history.sqlite"
    before = history.read_bytes()
    for args, flag in ((["report", stored, "--out", history], "--out"), (["merge", stored, "--csv", history], "--csv"),
                       (["compare", stored, stored, "--html", history], "--html"), (["view", "--out", history], "--out")):
        r = cli(*args)
        refused(r, flag, history, "the run history")
    kept(history, before)
    assert json.loads(stored.read_text())["samples"]
