"""The examples of docs/frameworks.md and docs/traces.md run as written (fake judge), through the real libraries."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import cli

DOCS = Path(__file__).resolve().parents[3] / "docs"


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("section, library", [("## LangChain", "langchain_core"), ("## LlamaIndex", "llama_index.core")])
def test_the_framework_examples_run_as_written(section, library, tmp_path, monkeypatch):
    pytest.importorskip(library, reason=f"{library} is not installed (pip install 'localragas[test]')")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = (DOCS / "frameworks.md").read_text(encoding="utf-8").split(section + "\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    env: dict = {}
    exec(code, env)  # noqa: S102 - the page's own example
    samples, report = env["samples"], env["report"]
    assert "The warranty lasts two years." in samples[0].contexts
    assert [s.id for s in report.samples] == [s.id for s in samples]


def test_the_trace_example_writes_spans_that_eval_scores(tmp_path, monkeypatch):
    pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is not installed (pip install 'localragas[test]')")
    monkeypatch.chdir(tmp_path)
    [code] = [b for b in blocks("traces.md", "python") if "TracerProvider" in b]
    exec(code, {})  # noqa: S102 - the page's own example
    [command] = [b for b in blocks("traces.md", "bash") if "--judge fake" in b]
    args = command.split()[1:]
    r = cli(*args, "--no-progress", "--no-cache", "--no-resume", "--out", tmp_path / "report.json")
    assert r.exit_code in (0, 1), r.output  # scored; the gate's verdict is the sample's
    [sample] = json.loads((tmp_path / "report.json").read_text())["samples"]
    assert len(sample["id"]) == 32 and sample["metrics"]["faithfulness"]["value"] == 1.0
