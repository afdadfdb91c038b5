"""docs/custom-metrics.md's examples run as written, in a copy of examples/, with the fake judge: the settings file
and its eval command, the calibrate command on labelled rows, and the Python block."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from localragas.core.errors import ConfigError

from cli_helpers import cli, write_jsonl

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "custom-metrics.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return re.search(rf"## {re.escape(title)}\n(.*?)(?=\n## |\Z)", DOC, re.S).group(1)


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


@pytest.fixture
def examples(tmp_path, monkeypatch, own_metrics):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_settings_file_and_its_eval_command_run_as_written(examples):
    section = _section("A criterion and a rubric in localragas.toml, as tested")
    (examples / "localragas.toml").write_text(_blocks(section, "toml")[0], encoding="utf-8")
    command = shlex.split(_blocks(section, "bash")[0].strip())[1:]
    r = cli(*command, "--no-progress", "--no-cache", "--no-resume")
    assert r.exit_code in (0, 1), r.output
    report = json.loads((examples / "report.json").read_text())
    assert report["metrics"] == ["faithfulness", "on_topic", "clarity"]
    gated = {g["metric"]: g["threshold"] for g in report["gate"]["results"]}
    assert gated["on_topic"] == 0.5 and gated["clarity"] == 0.4
    assert {"criterion:on_topic", "rubric:clarity"} <= set(report["meta"]["prompts"]["sha256"])
    assert "on_topic" in (examples / "junit.xml").read_text() and "clarity" in (examples / "junit.xml").read_text()


def test_the_calibrate_command_fits_the_criterions_family(examples):
    section = _section("A criterion and a rubric in localragas.toml, as tested")
    (examples / "localragas.toml").write_text(_blocks(section, "toml")[0], encoding="utf-8")
    rows = []
    for i in range(12):
        q = f"What colour is the sky above town {i}?"
        rows.append({"question": q, "answer": f"The sky above town {i} is blue.", "contexts": ["Skies are blue."],
                     "label": {"metric": "on_topic", "value": 1, "kind": "binary"}})
        rows.append({"question": q, "answer": f"Bananas ripen fast in warm kitchens, batch {i + 50}.", "contexts": [],
                     "label": {"metric": "on_topic", "value": 0, "kind": "binary"}})
    write_jsonl(examples / "labelled.jsonl", rows)
    command = shlex.split(_blocks(_section("Calibrating a criterion"), "bash")[0].strip())[1:]
    r = cli(*command, "--no-progress", "--no-cache", "--no-resume")
    assert r.exit_code == 0, r.output
    fitted = json.loads((examples / "on_topic.calibration.json").read_text())
    assert list(fitted["families"]) == ["criterion:on_topic"]
    assert "fitted criterion:on_topic (on_topic)" in r.output


def test_the_python_block_runs_as_written(examples, capsys):
    exec(compile(_blocks(_section("In Python, as tested"), "python")[0], "custom-metrics.md", "exec"), {})
    printed = capsys.readouterr().out
    for name in ("on_topic_py", "clarity_py", "answer_length_ok"):
        assert name in printed


def test_the_options_block_runs_as_written_and_its_options_are_checked(examples, capsys):
    scope: dict = {}
    exec(compile(_blocks(_section("A Metric subclass with options, as tested"), "python")[0], "custom-metrics.md",
                 "exec"), scope)
    assert "{'short_answer_py': {'unit': 'words', 'limit': 60}}" in capsys.readouterr().out
    short = scope["ShortAnswer"]()
    assert dict(short.with_options(unit="characters").options) == {"unit": "characters", "limit": 40}
    with pytest.raises(ConfigError, match=r"short_answer_py: unit must be one of words, characters, got 'lines' "
                                          r"\(words: the answer's words; characters: its characters\)"):
        short.with_options(unit="lines")
    with pytest.raises(ConfigError, match=r"unknown option\(s\) size for metric short_answer_py; valid: unit, limit"):
        short.with_options(size=3)
    with pytest.raises(ConfigError, match="short_answer_py: limit: Input should be greater than 0"):
        short.with_options(limit=0)
