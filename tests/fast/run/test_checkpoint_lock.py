"""A resume checkpoint in use by a live run is never resumed by another: the second run of the same data and options
is refused at once (exit 2, naming the checkpoint, the holder's pid and what to do); `--no-resume` runs beside it;
once the first ends, or dies (the OS drops its lock), the next run goes on as usual."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from localragas.core.errors import CheckpointError
from localragas.run.checkpoint import RecordCheckpoint

from cli_helpers import cli, sample_rows, write_jsonl

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: checkpoints are not locked on Windows")

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-cache"]

# `localragas ARGS` in a process of its own whose fake judge, once a sample is in the checkpoint, waits for the file
# RELEASE (writing STARTED when it begins to wait): a live run caught between two samples.
HELD_RUN = """
import sys, time
from pathlib import Path
import localragas.judges.fake as fake

release, started, runs = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
scripted = fake.FakeJudge._scripted  # every reply of the fake, JSON or graded

def held(self, prompt, output):
    if any(p.stat().st_size for p in runs.glob("*.jsonl")):
        started.touch()
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return scripted(self, prompt, output)

fake.FakeJudge._scripted = held
from localragas.cli import main
main(sys.argv[4:], prog_name="localragas")
"""


@pytest.fixture
def live(tmp_path, monkeypatch):
    """Start a held `localragas eval` of 10 samples in tmp_path's state folder: (process, data, release file)."""
    state = tmp_path / "state"
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(state))
    data = write_jsonl(tmp_path / "d.jsonl", sample_rows(10))
    release, started = tmp_path / "release", tmp_path / "started"
    env = {**os.environ, "LOCALRAGAS_STATE_DIR": str(state)}
    process = subprocess.Popen([sys.executable, "-c", HELD_RUN, release, started, state / "runs", "eval", data, *FAST],
                               env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert process.poll() is None, process.stdout.read()
        assert time.monotonic() < deadline, "the held run did not start"
        time.sleep(0.05)
    yield process, data, release
    release.touch()
    if process.poll() is None:
        process.kill()
    process.wait()


def test_a_second_live_run_of_the_same_checkpoint_is_refused_and_a_third_after_the_first_works(live, tmp_path):
    process, data, release = live
    [checkpoint] = (tmp_path / "state" / "runs").glob("*.jsonl")
    t0 = time.monotonic()
    r = cli("eval", data, *FAST)  # the same data and options, while the first is live
    assert time.monotonic() - t0 < 10
    assert r.exit_code == 2, r.output
    assert (f"Error: resume checkpoint {checkpoint} is in use by another live run of the same data and options "
            f"(pid {process.pid}): wait for it to end (the same command then resumes what it left), or run this one "
            "with --no-resume (or with another $LOCALRAGAS_STATE_DIR)") in r.output
    assert "resumed" not in r.output and "quality gate" not in r.output
    r = cli("eval", data, *FAST, "--no-resume")  # beside it, without a checkpoint: fine
    assert r.exit_code in (0, 1) and "resumed" not in r.output, r.output
    release.touch()
    out, _ = process.communicate(timeout=60)
    assert process.returncode in (0, 1), out
    assert not checkpoint.exists()
    r = cli("eval", data, *FAST)  # the first has ended: a run as usual
    assert r.exit_code in (0, 1) and "resumed" not in r.output, r.output


def test_a_run_killed_with_its_checkpoint_held_does_not_block_the_next_which_resumes_it(live, tmp_path):
    process, data, _ = live
    process.send_signal(signal.SIGKILL)
    process.wait()
    [checkpoint] = (tmp_path / "state" / "runs").glob("*.jsonl")
    assert checkpoint.with_name(checkpoint.name + ".lock").exists()  # left behind by the kill: its lock is gone
    r = cli("eval", data, *FAST)
    assert r.exit_code in (0, 1), r.output
    assert "resumed: 1 finished sample(s)" in r.output
    assert not checkpoint.exists() and not checkpoint.with_name(checkpoint.name + ".lock").exists()


def test_a_held_checkpoint_is_refused_to_another_holder_until_it_is_let_go(tmp_path):
    first, second = RecordCheckpoint(tmp_path / "c.jsonl"), RecordCheckpoint(tmp_path / "c.jsonl")
    with first.held():
        with first.held():  # the run around it holds it already: nothing more
            pass
        assert first.lock_path.read_text() == f"{os.getpid()}\n"
        with pytest.raises(CheckpointError, match=rf"in use by another live run .*\(pid {os.getpid()}\)"):
            second.lock()
    assert not first.lock_path.exists()
    with second.held():
        second.append("k", {"v": 1})
    assert second.load() == {"k": {"v": 1}}
