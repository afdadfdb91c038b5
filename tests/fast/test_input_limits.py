"""Inputs that never end or never open: a FIFO, a device, a file over --max-input-bytes is refused (exit 2) before it
is read, in well under a second; JSON Lines are read line by line with the same errors as before."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import localragas.dataset
import localragas.runner  # noqa: F401 - imported by `eval`; loaded here so the timings measure the refusal only
from localragas.calibrate import load_labelled
from localragas.cli import main
from localragas.dataset import DEFAULT_MAX_INPUT_BYTES, load_samples, read_records
from localragas.errors import ConfigError, DatasetError

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate", "--no-cache", "--no-resume"]
FIFO = "is not a regular file but a FIFO (named pipe): save the data to a file and give its path"
DEVICE = "is not a regular file but a character device: save the data to a file and give its path"
RAISE = "raise the limit with --max-input-bytes (max_input_bytes in localragas.toml or the Python API)"
COMMANDS = {"eval": ["eval", "{p}", *FAST], "calibrate": ["calibrate", "{p}", "--judge", "fake", "--embedder", "fake",
                                                          "--no-progress", "--no-cache", "--no-resume"]}


def invoke_within(args: list[str], seconds: float, fifo: Path | None = None, **kwargs):
    """CliRunner result and wall time of `localragas ARGS` in a thread; None if it is still running after `seconds`
    (a reader blocked on `fifo` is then let go by opening and closing the FIFO's write end)."""
    out: dict = {}

    def run():
        t0 = time.perf_counter()
        out["result"] = CliRunner().invoke(main, args, **kwargs)
        out["seconds"] = time.perf_counter() - t0

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if fifo is not None:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # EOF for the blocked reader
        thread.join(5)
        return None, None
    return out["result"], out["seconds"]


def refused(r, message: str) -> None:
    assert r is not None, "still running: the input was opened"
    assert r.exit_code == 2, r.output
    assert f"Error: {message}\n" in r.output, r.output
    assert "Traceback" not in r.output


def labelled_rows(n: int) -> str:
    row = {"question": "Q?", "contexts": ["The sky is blue."], "answer": "The sky is blue.",
           "label": {"metric": "faithfulness", "value": 1, "kind": "binary"}}
    return "".join(json.dumps({"id": f"s{i}", **row}) + "\n" for i in range(n))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("via_symlink", [False, True], ids=["fifo", "symlink-to-fifo"])
def test_a_fifo_input_exits_2_within_a_second_without_opening_it(tmp_path, command, via_symlink):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # no writer: opening it to read would block for ever
    p = fifo
    if via_symlink:
        p = tmp_path / "data.jsonl"
        p.symlink_to(fifo)
    r, seconds = invoke_within([a.format(p=p) for a in COMMANDS[command]], 5, fifo=fifo)
    refused(r, f"{p}: {FIFO}")
    assert seconds < 1.0


@pytest.mark.parametrize("command", COMMANDS)
def test_a_character_device_input_exits_2_within_a_second(tmp_path, command):
    p = tmp_path / "null.jsonl"
    p.symlink_to("/dev/null")
    r, seconds = invoke_within([a.format(p=p) for a in COMMANDS[command]], 5)
    refused(r, f"{p}: {DEVICE}")
    assert seconds < 1.0


def test_dev_zero_as_the_dataset_exits_2_at_once_instead_of_reading_until_memory_runs_out(tmp_path):
    """The reproduction: a dataset that is /dev/zero was read whole and died with MemoryError after 18 s. In a child
    process with a timeout, so a regression cannot take the test session's memory or hang it."""
    p = tmp_path / "zero.jsonl"
    p.symlink_to("/dev/zero")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCALRAGAS_STATE_DIR": str(tmp_path / "state")}
    code = "from localragas.cli import main; main()"
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, "eval", str(p), *FAST], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"Error: {p}: {DEVICE}\n" in done.stderr and "Traceback" not in done.stderr
    assert time.perf_counter() - t0 < 15  # the interpreter's start and imports; reading /dev/zero took 18 s to fail


@pytest.mark.parametrize("command", COMMANDS)
def test_an_input_over_max_input_bytes_exits_2_naming_its_size_the_limit_and_the_flag(tmp_path, command):
    p = tmp_path / "big.jsonl"
    p.write_text(labelled_rows(20))
    size = p.stat().st_size
    r, seconds = invoke_within([a.format(p=p) for a in COMMANDS[command]] + ["--max-input-bytes", "1000"], 5)
    refused(r, f"{p}: the file is {size:,} bytes, over the input limit of 1,000 bytes: {RAISE}")
    assert seconds < 1.0
    r = CliRunner().invoke(main, [a.format(p=p) for a in COMMANDS[command]] + ["--max-input-bytes", str(size)])
    assert r.exit_code == 0, r.output  # a file of exactly the limit is read


def test_max_input_bytes_in_localragas_toml(tmp_path, monkeypatch):
    p = tmp_path / "d.jsonl"
    p.write_text(labelled_rows(3))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localragas.toml").write_text("max_input_bytes = 100\n")
    r = CliRunner().invoke(main, ["eval", str(p), *FAST])
    refused(r, f"{p}: the file is {p.stat().st_size:,} bytes, over the input limit of 100 bytes: {RAISE}")
    r = CliRunner().invoke(main, ["eval", str(p), *FAST, "--max-input-bytes", "100000"])
    assert r.exit_code == 0, r.output  # the flag wins over the file
    (tmp_path / "localragas.toml").write_text("max_input_bytes = 0\n")
    r = CliRunner().invoke(main, ["eval", str(p), *FAST])
    assert r.exit_code == 2
    assert "localragas.toml: key 'max_input_bytes': max input bytes must be a whole number of bytes >= 1, got 0" \
        in r.output


def test_the_default_limit_is_4_gib_and_a_larger_file_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    assert DEFAULT_MAX_INPUT_BYTES == 4 << 30
    for fn in (load_samples, read_records, load_labelled):
        assert inspect.signature(fn).parameters["max_input_bytes"].default == DEFAULT_MAX_INPUT_BYTES
    p = tmp_path / "huge.jsonl"
    with open(p, "wb") as f:
        f.truncate(DEFAULT_MAX_INPUT_BYTES + 1)  # sparse: nothing is written

    def never(*a):
        raise AssertionError("the file was opened")

    monkeypatch.setattr(localragas.dataset, "_open", never)
    with pytest.raises(DatasetError) as e:
        load_samples(p)
    assert str(e.value) == f"{p}: the file is 4,294,967,297 bytes, over the input limit of 4,294,967,296 bytes: {RAISE}"


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc")
@pytest.mark.parametrize("name", ["status.jsonl", "status.json"])
def test_a_file_whose_size_stat_does_not_know_is_still_bounded_while_read(tmp_path, name):
    p = tmp_path / name
    p.symlink_to("/proc/self/status")  # a regular file of size 0 that holds about 1 kB
    with pytest.raises(DatasetError) as e:
        load_samples(p, skip_invalid=True, max_input_bytes=64)  # JSON Lines: read on past bad rows
    assert str(e.value) == f"{p}: the file holds more than the input limit of 64 bytes: {RAISE}"


def test_a_bad_limit_is_refused():
    for bad in (0, -1, 1.5, True, "4G"):
        with pytest.raises(ConfigError, match="max input bytes must be a whole number of bytes >= 1"):
            load_samples("x.jsonl", max_input_bytes=bad)
    r = CliRunner().invoke(main, ["eval", "x.jsonl", *FAST, "--max-input-bytes", "0"])
    assert r.exit_code == 2 and "--max-input-bytes" in r.output


# --- JSON Lines, read line by line -----------------------------------------------------------------------------

def test_jsonl_errors_name_the_line_and_byte_offset_read_line_by_line(tmp_path):
    good = json.dumps({"question": "Q?", "contexts": ["c"], "answer": "A."})
    head = b"\xef\xbb\xbf" + (good + "\r\n").encode() * 2998 + b"\n"  # BOM, CRLF, a blank line 2999
    data = head + b'{"question": "\xe2\x82"}\n' + (good + "\n").encode()
    p = tmp_path / "enc.ndjson"
    p.write_bytes(data)
    with pytest.raises(DatasetError) as e:
        load_samples(p, skip_invalid=True)  # a file-level error: raised even with skip_invalid
    offset = len(head) + 14
    assert str(e.value) == f"{p}, line 3000: invalid UTF-8 at byte offset {offset}; the file must be UTF-8 encoded"
    assert data[offset:offset + 2] == b"\xe2\x82"

    p.write_bytes(head + b'{"question": "Q?", "contexts": ["c"], "answer": \n' + (good + "\n").encode())
    samples, skipped = load_samples(p, skip_invalid=True)
    assert len(samples) == 2999 and [(s.line, s.reason) for s in skipped] == [
        (3000, "invalid JSON: Expecting value (column 49)")]
    assert samples[-1].id == "row-3000"  # rows, not lines: the blank line is not a row
