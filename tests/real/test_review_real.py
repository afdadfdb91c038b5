"""Spot checks on a real judge's run, through the CLI as a person meets them: `eval` the first two examples with
SmolLM2 + MiniLM, `review` twelve draws a metric answered from stdin (one key a line), then `report --labels`: the
labels are of the real run's items, and the report's spot checks and gate read them (docs/spot-checks.md)."""
from __future__ import annotations

import json

from cli_helpers import cli
from localragas.data.schema import Report
from localragas.quality.review_items import review_items
from localragas.quality.review_session import drawn
from real_helpers import EXAMPLES, examples_report

N_SAMPLES = 2
DRAWS = 12  # a metric's draws: at least the minimum (ppi.MIN_LABELS, 10) when no draw is skipped
METRICS = ("faithfulness", "context_precision")


def test_review_of_a_real_run_then_report_with_its_labels(tmp_path):
    run = tmp_path / "run.json"
    result = cli("eval", EXAMPLES, "--judge", "smollm2-135m", "--embedder", "minilm-l6", "--limit", N_SAMPLES,
                 "-m", ",".join(METRICS), "--no-judge-check", "--no-progress", "--no-cache", "--no-resume",
                 "--out", run)
    assert result.exit_code in (0, 1), result.output  # the gate may fail with a 135M judge; never an error
    report, _ = examples_report(run, limit=N_SAMPLES)

    shown = drawn(report, n=DRAWS)  # what the review shows, in its order
    assert {s.item.metric for s in shown} == set(METRICS), "the 135M judge scored no item of a metric"
    answers = ["y" if i % 2 == 0 else "n" for i in range(len(shown))]
    review = cli("review", run, "--n", DRAWS, "--reviewer", "tester", input="\n".join(answers) + "\n")
    assert review.exit_code == 0, review.output
    assert f"all {len(shown)} items done ({len(shown)} in this sitting)" in review.output

    labels_path = run.with_name("run.labels.jsonl")  # the default: beside the report
    lines = [json.loads(x) for x in labels_path.read_text(encoding="utf-8").splitlines()]
    assert [x["key"] for x in lines] == [s.item.key for s in shown]  # one line per shown item, in review order
    assert [x["label"] for x in lines] == [1 if a == "y" else 0 for a in answers]
    real_keys = {item.key for item in review_items(report, list(METRICS))}
    assert {x["key"] for x in lines} <= real_keys  # the real judge's report's items, keyed as it keys them
    assert all(x["reviewer"] == "tester" and x["design"]["seed"] == 0 for x in lines)

    checked = tmp_path / "checked.json"
    result = cli("report", run, "--labels", labels_path, "--out", checked)
    assert result.exit_code in (0, 1), result.output
    out = Report.model_validate(json.loads(checked.read_text()))
    assert out.spot_checks is not None and set(out.spot_checks.metrics) == set(METRICS)
    gate = {r.metric: r for r in out.gate.results}
    for metric in METRICS:
        check = out.spot_checks.metrics[metric]
        mine = [s for s in shown if s.item.metric == metric]
        assert check.labelled == len(mine) and check.skipped == 0 and check.reviewers == ["tester"]
        assert check.draws == len({o for s in mine for o in s.orders})  # an item drawn twice counts twice
        ppi = check.ppi_mean
        assert ppi.mean is not None and 0.0 <= ppi.mean <= 1.0
        assert ppi.ci_low is not None and ppi.ci_high is not None and ppi.ci_low <= ppi.mean <= ppi.ci_high
        assert check.trustworthy == (check.draws >= out.spot_checks.minimum)
        if metric not in gate or gate[metric].status in ("error", "not_evaluated"):
            continue
        if check.trustworthy:
            assert gate[metric].estimate == "prediction-powered", gate[metric]
            assert gate[metric].mean == ppi.mean
        else:
            assert gate[metric].estimate == "judge" and "spot checks not used" in gate[metric].message
