"""Inputs that never end or never open: a FIFO, a device, a file over --max-input-bytes is refused (exit 2) before it
is read, in well under a second; JSON Lines are read line by line with the same errors as before. The same rule holds
for every file a user names: datasets, labelled files, stored reports (`report`, `merge`, `compare`) and settings
files (localragas.core.inputs)."""
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

import localragas.quality.compare  # noqa: F401 - these are imported by `compare`, `eval`, `merge` and `report`: loaded here
import localragas.core.inputs
import localragas.report.comparison  # noqa: F401 - so that the timings measure the refusal only
import localragas.run.runner  # noqa: F401
import localragas.run.shard  # noqa: F401
from localragas.quality.labelled import load_labelled
from localragas.run.config import CONFIG_MAX_BYTES, KEY_PARTS_MAX, load_settings
from localragas.data.dataset import DEFAULT_MAX_INPUT_BYTES, load_samples, read_records
from localragas.core.errors import ConfigError, DatasetError, LocalragasError
from localragas.report import read_json, write_json
from localragas.report.calibration import read_calibration
from localragas.data.sample_record import content_id

from cli_helpers import cli, sample_rows, write_jsonl
from reports_helpers import make_report

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-gate", "--no-cache", "--no-resume"]
FIFO = "is not a regular file but a FIFO (named pipe): save the data to a file and give its path"
DEVICE = "is not a regular file but a character device: save the data to a file and give its path"
RAISE = "raise the limit with --max-input-bytes (max_input_bytes in localragas.toml or the Python API)"
RAISE_REPORT = "raise the limit with --max-input-bytes (max_input_bytes in the Python API)"
COMMANDS = {"eval": ["eval", "{p}", *FAST], "calibrate": ["calibrate", "{p}", "--judge", "fake", "--embedder", "fake",
                                                          "--no-progress", "--no-cache", "--no-resume"]}


def invoke_within(args: list[str], seconds: float, fifo: Path | None = None):
    """CliRunner result and wall time of `localragas ARGS` in a thread; None if it is still running after `seconds`
    (a reader blocked on `fifo` is then let go by opening and closing the FIFO's write end)."""
    out: dict = {}

    def run():
        t0 = time.perf_counter()
        out["result"] = cli(*args)
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
    r = cli(*(a.format(p=p) for a in COMMANDS[command]), "--max-input-bytes", size)
    assert r.exit_code == 0, r.output  # a file of exactly the limit is read


def test_max_input_bytes_in_localragas_toml(tmp_path, monkeypatch):
    p = tmp_path / "d.jsonl"
    p.write_text(labelled_rows(3))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localragas.toml").write_text("max_input_bytes = 100\n")
    r = cli("eval", str(p), *FAST)
    refused(r, f"{p}: the file is {p.stat().st_size:,} bytes, over the input limit of 100 bytes: {RAISE}")
    r = cli("eval", str(p), *FAST, "--max-input-bytes", "100000")
    assert r.exit_code == 0, r.output  # the flag wins over the file
    (tmp_path / "localragas.toml").write_text("max_input_bytes = 0\n")
    r = cli("eval", str(p), *FAST)
    assert r.exit_code == 2
    assert "localragas.toml: key 'max_input_bytes': max input bytes must be a whole number of bytes >= 1, got 0" \
        in r.output


def test_the_default_limit_is_4_gib_and_a_larger_file_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    assert DEFAULT_MAX_INPUT_BYTES == 4 << 30
    for fn in (load_samples, read_records, load_labelled, read_json, read_calibration):
        assert inspect.signature(fn).parameters["max_input_bytes"].default == DEFAULT_MAX_INPUT_BYTES
    p = tmp_path / "huge.jsonl"
    with open(p, "wb") as f:
        f.truncate(DEFAULT_MAX_INPUT_BYTES + 1)  # sparse: nothing is written

    def never(*a):
        raise AssertionError("the file was opened")

    monkeypatch.setattr(localragas.core.inputs, "open_input", never)
    with pytest.raises(DatasetError) as e:
        load_samples(p)
    assert str(e.value) == f"{p}: the file is 4,294,967,297 bytes, over the input limit of 4,294,967,296 bytes: {RAISE}"
    report = p.rename(tmp_path / "huge.json")
    with pytest.raises(LocalragasError) as e:
        read_json(report)
    assert str(e.value) == (f"{report}: the file is 4,294,967,297 bytes, over the input limit of 4,294,967,296 bytes: "
                            f"{RAISE_REPORT}")


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
    r = cli("eval", "x.jsonl", *FAST, "--max-input-bytes", "0")
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
    assert samples[-1].id == content_id("Q?") + "-2999"  # the same question in every row: numbered


# --- stored reports: `report`, `merge`, `compare` --------------------------------------------------------------

REPORT_COMMANDS = {"report": ["report", "{p}"], "merge": ["merge", "{p}"],
                   "compare-base": ["compare", "{p}", "{good}"], "compare-new": ["compare", "{good}", "{p}"]}


def good_report(tmp_path: Path) -> Path:
    out = tmp_path / "good.json"
    write_json(make_report({"s1": {"faithfulness": 0.9}, "s2": {"faithfulness": 0.8}}), out)
    return out


def report_args(command: str, p: Path, good: Path, *extra: str) -> list[str]:
    return [a.format(p=p, good=good) for a in REPORT_COMMANDS[command]] + list(extra)


@pytest.mark.parametrize("command", REPORT_COMMANDS)
@pytest.mark.parametrize("via_symlink", [False, True], ids=["fifo", "symlink-to-fifo"])
def test_a_fifo_report_exits_2_within_a_second_without_opening_it(tmp_path, command, via_symlink):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # passes click.Path(exists=True); opening it to read would block for ever
    p = fifo
    if via_symlink:
        p = tmp_path / "report.json"
        p.symlink_to(fifo)
    r, seconds = invoke_within(report_args(command, p, good_report(tmp_path)), 5, fifo=fifo)
    refused(r, f"{p}: {FIFO}")
    assert seconds < 1.0


def test_dev_zero_as_a_report_exits_2_at_once_for_report_merge_and_compare(tmp_path):
    """A report that is /dev/zero was read whole. In a child process with an address-space limit, so a regression
    fails (MemoryError: exit 3) instead of taking the machine's memory; the timeout is for the unforeseen only (the
    child's start is slow on a loaded machine, the refusals themselves are timed inside it)."""
    p = tmp_path / "zero.json"
    p.symlink_to("/dev/zero")
    good = good_report(tmp_path)
    runs = [report_args(c, p, good) for c in REPORT_COMMANDS]
    code = (
        "import json, resource, sys, time\n"
        "from click.testing import CliRunner\n"
        "import localragas.quality.compare, localragas.report.comparison, localragas.run.runner, localragas.run.shard\n"
        "from localragas.cli import main\n"
        "vm = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.getrlimit(resource.RLIMIT_AS)[1]))\n"
        "out = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    t0 = time.perf_counter()\n"
        "    r = CliRunner().invoke(main, args)\n"
        "    out.append([r.exit_code, r.output, time.perf_counter() - t0])\n"
        "print(json.dumps(out))\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCALRAGAS_STATE_DIR": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-c", code, json.dumps(runs)], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for args, (exit_code, output, seconds) in zip(runs, json.loads(done.stdout)):
        assert exit_code == 2, (args, output)
        assert f"Error: {p}: {DEVICE}\n" in output and "Traceback" not in output, (args, output)
        assert seconds < 1.0, args


@pytest.mark.parametrize("command", REPORT_COMMANDS)
def test_a_report_over_max_input_bytes_exits_2_naming_its_size_the_limit_and_the_flag(tmp_path, command):
    good = good_report(tmp_path)
    p = tmp_path / "big.json"
    p.write_bytes(good.read_bytes())
    size = p.stat().st_size
    r, seconds = invoke_within(report_args(command, p, good, "--max-input-bytes", "100"), 5)
    bad = good if command == "compare-new" else p  # compare reads BASE first: the good report is too big as well
    refused(r, f"{bad}: the file is {size:,} bytes, over the input limit of 100 bytes: {RAISE_REPORT}")
    assert seconds < 1.0


def test_a_report_of_exactly_max_input_bytes_is_read(tmp_path):
    good = good_report(tmp_path)
    size = str(good.stat().st_size)
    for args in (["report", str(good)], ["compare", str(good), str(good)]):
        r = cli(*args, "--max-input-bytes", size)
        assert r.exit_code == 0, r.output


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc")
def test_a_report_whose_size_stat_does_not_know_is_still_bounded_while_read(tmp_path):
    p = tmp_path / "status.json"
    p.symlink_to("/proc/self/status")  # a regular file of size 0 that holds about 1 kB
    with pytest.raises(LocalragasError) as e:
        read_json(p, max_input_bytes=64)
    assert str(e.value) == f"{p}: the file holds more than the input limit of 64 bytes: {RAISE_REPORT}"


# --- settings files: --config, ./localragas.toml, pyproject.toml -----------------------------------------------

@pytest.mark.parametrize("found", [False, True], ids=["--config", "./localragas.toml"])
def test_a_config_that_is_a_fifo_exits_2_within_a_second(tmp_path, monkeypatch, found):
    data = tmp_path / "d.jsonl"
    data.write_text(labelled_rows(1))
    fifo = tmp_path / "localragas.toml"
    os.mkfifo(fifo)
    monkeypatch.chdir(tmp_path)
    args = ["eval", str(data), *FAST] + ([] if found else ["--config", str(fifo)])
    r, seconds = invoke_within(args, 5, fifo=fifo)
    refused(r, f"{fifo}: {FIFO}")  # found, it is refused, never passed over: its thresholds would be lost
    assert seconds < 1.0


def test_a_config_that_is_a_device_or_too_big_is_refused(tmp_path):
    p = tmp_path / "null.toml"
    p.symlink_to("/dev/null")
    r, seconds = invoke_within(["eval", "d.jsonl", *FAST, "--config", str(p)], 5)
    refused(r, f"{p}: {DEVICE}")
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(CONFIG_MAX_BYTES + 1)  # sparse
    with pytest.raises(ConfigError) as e:
        load_settings(big)
    assert str(e.value) == (f"{big}: the file is 262,145 bytes, over the input limit of 262,144 bytes: a "
                            "settings file is at most 256 KiB")


def test_a_settings_file_with_a_200_kb_dotted_key_is_refused_at_once_naming_its_line(tmp_path):
    """tomllib's time grows with the square of a key's parts: this key alone took about a minute inside it."""
    write_jsonl(tmp_path / "d.jsonl", sample_rows(1))
    p = tmp_path / "deep-key.toml"
    p.write_text('judge = "fake"\n' + ".".join(["a"] * 100_000) + " = 1\n")
    assert p.stat().st_size > 200_000
    r, seconds = invoke_within(["eval", str(tmp_path / "d.jsonl"), *FAST, "--config", str(p)], 5)
    shown = ("a." * KEY_PARTS_MAX + "a")[:40]
    refused(r, f"{p}, line 2: a dotted key of more than {KEY_PARTS_MAX} parts ({shown}...); a settings key has a "
               "handful")
    assert seconds < 1.0


@pytest.mark.parametrize("nested", ["[" * 100_000 + "]" * 100_000, "{a=" * 50_000 + "1" + "}" * 50_000])
def test_a_settings_file_nested_100000_deep_exits_2_naming_it(tmp_path, nested):
    write_jsonl(tmp_path / "d.jsonl", sample_rows(1))
    p = tmp_path / "nested.toml"
    p.write_text(f"judge = {nested}\n")
    r, _ = invoke_within(["eval", str(tmp_path / "d.jsonl"), *FAST, "--config", str(p)], 10)
    refused(r, f"{p}: not valid TOML: nested too deeply (arrays or inline tables within each other)")


def test_a_settings_file_at_its_size_bound_parses_within_a_second(tmp_path):
    """The largest file, all of it keys of KEY_PARTS_MAX parts: tomllib's slowest case that is let in."""
    line = ".".join(["a"] * (KEY_PARTS_MAX - 1)) + ".k{} = 1\n"
    lines, size = [], 0
    while size + len(line) + 6 <= CONFIG_MAX_BYTES:
        lines.append(line.format(f"{len(lines):06d}"))
        size += len(lines[-1])
    p = tmp_path / "localragas.toml"
    p.write_text("".join(lines))
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="key 'a': not a setting of the file"):  # parsed, then its keys checked
        load_settings(p)
    assert time.perf_counter() - t0 < 1.0
