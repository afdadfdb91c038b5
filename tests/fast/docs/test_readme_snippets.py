"""The README's notebook snippet runs as written (fake judge): a DataFrame of the examples in, a report, its two
frames, and assert_gate failing on the examples' failed gate."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")
NOTEBOOK_SECTION = README.split("## In a notebook", 1)[1].split("\n## ", 1)[0]
SNIPPET = re.search(r"```python\n(.*?)```", NOTEBOOK_SECTION, flags=re.S).group(1)


def test_the_notebook_snippet_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)  # it reads examples/rag_samples.jsonl; the judge cache goes to the tests' state folder
    *body, last = SNIPPET.strip().splitlines()
    assert last.startswith("localragas.assert_gate(report)")
    env: dict = {}
    exec("\n".join(body), env)  # noqa: S102 - the README's own code
    report = env["report"]
    assert len(report.samples) == 16
    frame, summary = report.to_pandas(), report.summary_frame()
    assert len(frame) == 16 and {"faithfulness", "answer_relevancy", "context_precision", "context_recall"} <= set(frame)
    assert list(summary.index) == ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
    with pytest.raises(AssertionError, match="answer_relevancy"):
        exec(last, env)  # noqa: S102
