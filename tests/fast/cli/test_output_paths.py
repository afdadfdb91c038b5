"""Output paths are checked before judging starts (never the input, never a folder, one file per output, writable),
and written without destroying links or device nodes: a symlink is written through, /dev/null and FIFOs directly."""
from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

import localragas.run.prepared_run as prepared_run
from localragas.core.atomic_write import write_atomic

from cli_helpers import cli

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]
FLAGS = ["--out", "--csv", "--html", "--md", "--junit"]


@pytest.fixture
def no_judging(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("judging started before the output paths were checked")

    monkeypatch.setattr(prepared_run, "prepare", boom)


@pytest.mark.parametrize("flag", FLAGS)
def test_an_output_on_the_input_is_refused_before_judging_and_the_input_is_unchanged(data, flag, no_judging):
    before = data.read_bytes()
    r = cli("eval", data, *FAST, flag, data)
    assert r.exit_code == 2, r.output
    assert f"{flag} {data} is the input" in r.output and "Traceback" not in r.output
    assert data.read_bytes() == before


@pytest.mark.parametrize("flag", ["--out", "--html"])
def test_the_input_through_a_symlink_or_a_hard_link_is_refused(data, tmp_path, flag, no_judging):
    before = data.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(data)
    r = cli("eval", data, *FAST, flag, link)
    assert r.exit_code == 2 and "through a symlink" in r.output, r.output
    hard = tmp_path / "hard.json"
    os.link(data, hard)
    assert cli("eval", data, *FAST, flag, hard).exit_code == 2
    assert cli("eval", link, *FAST, flag, data).exit_code == 2  # the input given as the link
    assert data.read_bytes() == before and link.is_symlink()


def test_the_config_file_is_an_input_too(data, tmp_path, monkeypatch, no_judging):
    monkeypatch.chdir(tmp_path)
    Path("localragas.toml").write_text('judge = "fake"\n')
    r = cli("eval", data, "--no-progress", "--md", "localragas.toml")
    assert r.exit_code == 2 and "localragas.toml (the settings file): writing there would destroy it" in r.output, r.output


def test_two_outputs_on_one_path_are_refused(data, tmp_path, no_judging):
    same = tmp_path / "same.json"
    r = cli("eval", data, *FAST, "--out", same, "--html", same)
    assert r.exit_code == 2 and "--html" in r.output and "same file as --out" in r.output, r.output
    assert not same.exists()


def test_a_folder_or_a_path_under_a_file_is_refused(data, tmp_path, no_judging):
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "to-folder"
    link.symlink_to(folder)
    for bad in (folder, link):
        r = cli("eval", data, *FAST, "--junit", bad)
        assert r.exit_code == 2, r.output
    r = cli("eval", data, *FAST, "--md", data / "x.md")
    assert r.exit_code == 2 and "is not a folder" in r.output and "Traceback" not in r.output


def test_report_merge_compare_refuse_their_inputs(tmp_path, data):
    stored = tmp_path / "r.json"
    assert cli("eval", data, *FAST, "--no-gate", "--out", stored).exit_code == 0
    before = stored.read_bytes()
    for args in (["report", stored, "--html", stored], ["compare", stored, stored, "--md", stored],
                 ["merge", stored, "--csv", stored]):
        r = cli(*args)
        assert r.exit_code == 2 and "is the input" in r.output, (args, r.output)
    assert stored.read_bytes() == before


def test_an_output_symlink_is_written_through_to_its_target(data, tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    r = cli("eval", data, *FAST, "--no-gate", "--out", link)
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["samples"]


def test_dev_null_stays_a_character_device(data):
    r = cli("eval", data, *FAST, "--no-gate", "--md", "/dev/null")
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_is_written_to_directly(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_atomic(fifo, "hello\n")
    reader.join(5)
    assert got == ["hello\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_regular_file_is_still_replaced_atomically(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    inode = path.stat().st_ino
    write_atomic(path, "new")
    assert path.read_text() == "new" and path.stat().st_ino != inode  # a new file renamed over the old one
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder_is_refused_before_judging(data, tmp_path, no_judging):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        r = cli("eval", data, *FAST, "--out", locked / "r.json")
    finally:
        locked.chmod(0o700)
    assert r.exit_code == 2 and "not writable" in r.output, r.output


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_folder_nobody_may_write_is_refused_before_judging(data, no_judging):
    r = cli("eval", data, *FAST, "--csv", "/proc/self/localragas/scores.csv")  # not writable even for root
    assert r.exit_code == 2 and "--csv /proc/self/localragas/scores.csv cannot be created" in r.output, r.output
    assert "not writable" in r.output and "Traceback" not in r.output


def test_an_output_inside_the_judge_cache_folder_is_refused(data, tmp_path, no_judging):
    cc = tmp_path / "cc"
    cc.mkdir()
    r = cli("eval", data, *FAST, "--cache-dir", cc, "--out", cc / "judge-cache.sqlite3")
    assert r.exit_code == 2 and "is inside the input folder" in r.output, r.output
