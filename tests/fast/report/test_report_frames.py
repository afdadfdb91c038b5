"""A report in a notebook: to_pandas() and summary_frame() hold the report's numbers, the repr is a few lines, the
HTML escapes every text."""
from __future__ import annotations

import csv
import io
import math
import sys

import pandas as pd
import pytest

from localragas import evaluate
from localragas.core.errors import MissingDependencyError
from localragas.report import write_csv
from localragas.data.sample_record import content_id
from localragas.data.schema import MetricResult, Report

from inputs_helpers import ROWS


@pytest.fixture(scope="module")
def report() -> Report:
    return evaluate(ROWS, judge="fake", embedder="fake", cache=False)


def test_to_pandas_holds_each_samples_scores_and_reasons(report):
    df = report.to_pandas()
    assert list(df.columns) == ["id", "category", "question", "answer", "contexts", "reference", *report.metrics,
                                *(f"{m}_unscored" for m in report.metrics), "seconds"]
    assert df["question"].tolist() == [r["question"] for r in ROWS]  # the sample's text, as ragas's to_pandas has it
    assert df["contexts"].tolist() == [r["contexts"] for r in ROWS]
    assert df["id"].tolist() == [s.id for s in report.samples] == [content_id(r["question"]) for r in ROWS]
    assert df["category"].iloc[0] == "nature" and df["category"].iloc[1:].isna().all()  # None or NaN (pandas 3)
    unscored = 0
    for row, s in zip(df.itertuples(index=False), report.samples):
        row = row._asdict()
        for m in report.metrics:
            r = s.metrics[m]
            if r.value is None:
                unscored += 1
                assert math.isnan(row[m]) and row[f"{m}_unscored"] == r.unscored
            else:
                assert row[m] == r.value and pd.isna(row[f"{m}_unscored"])
    assert unscored >= 1  # sample 2 has no reference: context_recall unscored
    assert all(df[m].dtype == "float64" for m in report.metrics)


def test_to_pandas_has_the_csv_reports_columns(report, tmp_path):
    write_csv(report, tmp_path / "s.csv")
    header = next(csv.reader(io.StringIO((tmp_path / "s.csv").read_text())))
    assert header == list(report.to_pandas().columns)


def test_summary_frame_one_row_per_metric(report):
    frame = report.summary_frame()
    assert frame.index.tolist() == report.metrics
    assert list(frame.columns) == ["mean", "ci_low", "ci_high", "threshold", "passed", "status", "scored", "unscored",
                                   "higher_is_better"]
    gate = {g.metric: g for g in report.gate.results}
    for s in report.summary:
        row = frame.loc[s.metric]
        assert (row["scored"], row["unscored"]) == (s.scored, s.unscored)
        assert row["mean"] == s.mean or (s.mean is None and math.isnan(row["mean"]))
        assert row["ci_low"] == s.ci_low or (s.ci_low is None and math.isnan(row["ci_low"]))
        assert row["threshold"] == gate[s.metric].threshold
        assert row["status"] == gate[s.metric].status and row["passed"] == (gate[s.metric].status == "passed")


def test_summary_frame_with_the_gate_off():
    off = evaluate(ROWS, judge="fake", embedder="fake", cache=False, gate=False, metrics=["faithfulness"])
    frame = off.summary_frame()
    assert frame.loc["faithfulness", "passed"] is None and frame.loc["faithfulness", "status"] is None
    assert math.isnan(frame.loc["faithfulness", "threshold"])


def test_repr_is_a_few_lines_with_verdict_means_and_intervals(report):
    text = repr(report)
    assert len(text) < 600 and text.count("\n") == len(report.metrics)
    verdict = "gate PASSED" if report.gate.passed else "gate FAILED"
    assert text.startswith(f"<localragas Report: {verdict}; 3 samples, judge fake>")
    for s in report.summary:
        line = next(x for x in text.splitlines() if x.strip().startswith(s.metric))
        assert (f"{s.mean:.3f}" if s.mean is not None else "—") in line
        if s.ci_low is not None:
            assert f"[{s.ci_low:.3f}, {s.ci_high:.3f}]" in line
    assert str(report) == text
    assert "context_recall" in text and "no_reference 1" in text


def test_repr_html_escapes_every_text(report):
    hostile = report.model_copy(deep=True)
    hostile.meta["judge"] = {"name": "<script>alert(1)</script>"}
    hostile.summary[0].unscored_reasons = {"judge_error: <img src=x onerror=alert(1)>": 1}
    page = hostile._repr_html_()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<tr>") == 1 + len(report.metrics)
    for s in report.summary:
        if s.ci_low is not None:
            assert f"[{s.ci_low:.3f}, {s.ci_high:.3f}]" in page


def test_frames_without_pandas_say_how_to_get_it(report, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(MissingDependencyError, match="need pandas: pip install pandas"):
        report.to_pandas()
    with pytest.raises(MissingDependencyError, match="pip install pandas"):
        report.summary_frame()
    assert repr(report)  # the repr needs no pandas


def test_the_model_is_still_pydantic(report):
    again = Report.model_validate_json(report.model_dump_json())
    assert again.model_dump_json() == report.model_dump_json()
    assert isinstance(again.samples[0].metrics["faithfulness"], MetricResult)
    assert isinstance(pd.DataFrame(again.to_pandas()), pd.DataFrame)
