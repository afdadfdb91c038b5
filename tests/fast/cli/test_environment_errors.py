"""Environment errors (permission, missing folder, read-only file system, full disk: any OSError on a user's path) exit 2
with the path and what to do, without a traceback, on every command: one error-to-exit mapping. Exit 3 is for bugs."""
from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import localragas.run.config
import localragas.judges.cache
import localragas.quality.calibration  # bound before any test patches read_labelled (it imports the name)
import localragas.quality.labelled
import localragas.metrics
import localragas.judges.catalogue
import localragas.report
import localragas.report.json_stream
import localragas.core.atomic_write
from localragas.core.errors import environment_message

from cli_helpers import cli, write_jsonl

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
DENIED = PermissionError(errno.EACCES, "Permission denied", "/srv/locked/file")


@pytest.fixture
def stored(tmp_path, data) -> Path:
    out = tmp_path / "r.json"
    assert cli("eval", data, *FAST, "--no-gate", "--out", out).exit_code == 0
    return out


def denied(*a, **k):
    raise DENIED


def check_environment_error(r, path="/srv/locked/file"):
    assert r.exit_code == 2, r.output
    assert f"Error: {path}: Permission denied: check its permissions, or choose another path" in r.output
    assert "Traceback" not in r.output and "internal error" not in r.output


@pytest.mark.parametrize("module, name, args", [
    (localragas.run.config, "_read", ["eval", "{data}", "--no-progress", "--config", "{data}"]),
    (localragas.judges.catalogue, "verify", ["models", "verify", "qwen2.5-1.5b"]),
    (localragas.judges.catalogue, "models_dir_source", ["models", "list"]),
    (localragas.judges.catalogue, "path", ["models", "path", "qwen2.5-1.5b"]),
    (localragas.judges.catalogue, "models_dir", ["models", "path", "--dir"]),
    (localragas.judges.catalogue, "pull", ["models", "pull", "qwen2.5-1.5b"]),
    (localragas.judges.cache.JudgeCache, "info", ["cache", "info", "--cache-dir", "{tmp}/c"]),
    (localragas.judges.cache.JudgeCache, "clear", ["cache", "clear", "--cache-dir", "{tmp}/c"]),
    (localragas.metrics, "all_metrics", ["metrics"]),
    (localragas.report.json_stream, "stream_json", ["report", "{stored}"]),  # read as it streams
    (localragas.report.json_stream, "stream_json", ["merge", "{stored}"]),
    (localragas.report, "read_json", ["compare", "{stored}", "{stored}"]),
    (localragas.quality.labelled, "read_labelled", ["calibrate", "{data}", "--judge", "fake"]),
    (localragas.core.atomic_write.os, "replace", ["eval", "{data}", *FAST, "--out", "{tmp}/r2.json"]),
    (localragas.core.atomic_write.os, "replace", ["calibrate", "{labelled}", *FAST, "--out", "{tmp}/c.json"]),
])
def test_every_command_maps_an_os_error_to_exit_2(monkeypatch, tmp_path, data, stored, module, name, args):
    monkeypatch.setattr(module, name, denied)
    label = {"label": {"metric": "faithfulness", "kind": "binary", "value": 1}}
    labelled = write_jsonl(tmp_path / "l.jsonl", [{**json.loads(line), **label} for line in data.read_text().splitlines()])
    fill = {"data": data, "stored": stored, "tmp": tmp_path, "labelled": labelled}
    check_environment_error(cli(*[a.format(**fill) for a in args]))


def test_models_verify_tells_an_environment_error_from_a_mismatch(monkeypatch):
    r = cli("models", "verify", "no-such-model")
    assert r.exit_code == 2 and "unknown model" in r.output and "Traceback" not in r.output
    monkeypatch.setattr(localragas.judges.catalogue, "verify", lambda name: (False, "sha256 mismatch"))
    assert cli("models", "verify", "qwen2.5-1.5b").exit_code == 1
    monkeypatch.setattr(localragas.judges.catalogue, "verify", denied)
    check_environment_error(cli("models", "verify", "qwen2.5-1.5b"))


@pytest.mark.parametrize("command", ["info", "clear"])
def test_cache_commands_on_an_unusable_cache_folder_exit_2(tmp_path, command):
    (tmp_path / "cc" / "judge-cache.sqlite3").mkdir(parents=True)  # a folder where the database should be
    r = cli("cache", command, "--cache-dir", tmp_path / "cc")
    assert r.exit_code == 2, r.output
    assert "judge-cache.sqlite3" in r.output and "--no-cache" in r.output and "Traceback" not in r.output


def test_a_cache_folder_that_cannot_be_made_exits_2_before_judging(data, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = cli("eval", data, *FAST, "--cache-dir", blocker / "cc")
    assert r.exit_code == 2 and "choose another --cache-dir" in r.output and "Traceback" not in r.output, r.output
    assert "quality gate" not in r.output


def test_a_state_folder_in_the_way_exits_2_before_judging(data, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "runs").write_text("")  # a file where the checkpoint folder should be
    r = cli("eval", data, *FAST, "--no-cache", LOCALRAGAS_STATE_DIR=str(state))
    assert r.exit_code == 2, r.output
    assert "runs" in r.output and "Traceback" not in r.output and "quality gate" not in r.output


def test_a_checkpoint_that_is_a_folder_exits_2(data, tmp_path, monkeypatch):
    import localragas.run.evaluation

    monkeypatch.setattr(localragas.run.evaluation, "checkpoint_key", lambda *parts: "fixed")
    runs = tmp_path / "state" / "runs"
    (runs / "fixed.jsonl").mkdir(parents=True)
    r = cli("eval", data, *FAST, "--no-cache", LOCALRAGAS_STATE_DIR=str(tmp_path / "state"))
    assert r.exit_code == 2, r.output
    assert "resume checkpoint" in r.output and "--no-resume" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("code, words", [
    (errno.EROFS, "read-only"), (errno.ENOSPC, "disk is full"), (errno.ENOENT, "does not exist"),
    (errno.EISDIR, "is a folder"), (errno.EIO, "check the path and the file system"),
])
def test_environment_message_says_what_to_do(code, words):
    msg = environment_message(OSError(code, "what the system says", "/some/path"))
    assert msg.startswith("/some/path: what the system says: ") and words in msg


def test_a_bug_still_exits_3(monkeypatch):
    monkeypatch.setattr(localragas.metrics, "all_metrics", lambda: 1 / 0)
    r = cli("metrics")
    assert r.exit_code == 3 and "internal error ZeroDivisionError" in r.output
