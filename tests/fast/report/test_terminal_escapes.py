"""Terminal output never carries a raw control character from data: ids, categories and error messages holding
OSC/CSI sequences are shown escaped (\\x1b…), in tables, progress lines, error messages and comparisons."""
from __future__ import annotations

import pytest

from localragas.core.errors import JudgeError
from localragas.judges import fake
from localragas.core.printable import printable

from cli_helpers import cli, sample_rows, write_jsonl

EVIL = "\x1b]0;PWNED\x07"
CSI = "\x1b[2J\x9b31m"
FAST = ["--judge", "fake", "--embedder", "fake"]


def raw_free(output: str) -> None:
    assert "\x1b" not in output and "\x07" not in output and "\x9b" not in output, repr(output)


def test_printable_escapes_controls_and_bidi_overrides_and_keeps_text():
    assert printable(EVIL) == "\\x1b]0;PWNED\\x07"
    assert printable("a\u202eb\rc\nd") == "a\\u202eb\\rc\\nd"
    assert printable("line 1\n\tline 2", newlines=True) == "line 1\n\tline 2"
    assert printable("été 北京") == "été 北京"


def test_a_duplicate_id_in_the_error_message_is_escaped(tmp_path):
    recs = sample_rows(3)
    recs[1]["id"] = recs[2]["id"] = EVIL
    r = cli("eval", write_jsonl(tmp_path / "d.jsonl", recs), *FAST, "--no-progress")
    assert r.exit_code == 2 and "duplicate id '\\x1b]0;PWNED\\x07'" in r.output, r.output
    raw_free(r.output)


def test_categories_ids_and_progress_lines_are_escaped(tmp_path):
    recs = sample_rows(3)
    recs[0]["category"] = EVIL + "cat"
    recs[1]["category"] = CSI + "[bold]markup[/bold]"
    recs[2]["id"] = EVIL
    r = cli("eval", write_jsonl(tmp_path / "d.jsonl", recs), *FAST, "--progress", "--no-gate")
    assert r.exit_code == 0, r.output
    assert "\\x1b]0;PWNEDcat" in r.output.replace("\\x07", "") and "[bold]markup[/bold]" in r.output
    raw_free(r.output)


def test_error_messages_from_the_judge_are_escaped(tmp_path, monkeypatch):
    monkeypatch.setattr(fake, "heuristic_reply", lambda prompt, output: JudgeError(f"server said {EVIL}{CSI}"))
    r = cli("eval", write_jsonl(tmp_path / "d.jsonl", sample_rows(3)), *FAST, "--no-progress", "-m", "faithfulness")
    assert r.exit_code == 4, r.output
    assert "server said \\x1b]0;PWNED\\x07" in r.output
    raw_free(r.output)


def test_compare_escapes_ids(tmp_path):
    recs = sample_rows(4)
    recs[0]["id"] = EVIL
    data = write_jsonl(tmp_path / "d.jsonl", recs)
    base, new = tmp_path / "a.json", tmp_path / "b.json"
    assert cli("eval", data, *FAST, "--no-progress", "--no-gate", "--out", base).exit_code == 0
    recs[0]["answer"] = "Something else entirely about Paris."
    write_jsonl(data, recs)
    assert cli("eval", data, *FAST, "--no-progress", "--no-gate", "--out", new).exit_code == 0
    r = cli("compare", base, new)
    assert r.exit_code == 0, r.output
    raw_free(r.output)


@pytest.mark.parametrize("path", ["out\x1b]0;x\x07.json"])
def test_paths_in_wrote_lines_are_escaped(tmp_path, path):
    data = write_jsonl(tmp_path / "d.jsonl", sample_rows(3))
    r = cli("eval", data, *FAST, "--no-progress", "--no-gate", "--md", tmp_path / path)
    assert r.exit_code == 0 and "wrote " in r.output, r.output
    raw_free(r.output)
