"""People's labels through the command line: `report --labels` (the block, the gate on the prediction-powered mean,
--gate-on lower-bound, labels of another run refused, too few labels keep the judge's gate) and `eval --labels` with
the fake judge."""
from __future__ import annotations

import json

from cli_helpers import cli, write_jsonl
from localragas.data.labels import Design, Label, append_label
from localragas.quality.review_draw import plan
from localragas.quality.review_items import review_items
from localragas.report import write_json
from spot_helpers import checked_report, label_items

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress", "--no-history"]


def _setup(tmp_path, shift=0.25, n=40, **kw):
    report = checked_report(judge_shift=shift, thresholds={"faithfulness": 0.6, "context_recall": 0.5,
                                                           "context_precision": 0.5}, **kw)
    path = tmp_path / "run.json"
    write_json(report, path)
    labels = tmp_path / "labels.jsonl"
    label_items(report, labels, ("faithfulness",), n=n)
    return report, path, labels


def test_report_labels_round_trip_and_the_gate_reads_the_people(tmp_path):
    report, path, labels = _setup(tmp_path)
    assert report.gate.passed  # the biased judge alone passes faithfulness (mean ~0.75 >= 0.6)
    out = tmp_path / "checked.json"
    r = cli("report", path, "--labels", labels, "--out", out)
    assert r.exit_code == 1, r.output  # the people's share is ~0.5: the prediction-powered mean fails
    data = json.loads(out.read_text())
    block = data["spot_checks"]["metrics"]["faithfulness"]
    assert block["draws"] == 40 and block["reviewers"] == ["ana"] and block["trustworthy"]
    assert block["ppi_mean"]["mean"] < 0.6 < block["judge_mean"]["mean"]
    gate = {g["metric"]: g for g in data["gate"]["results"]}
    assert gate["faithfulness"]["estimate"] == "prediction-powered"
    assert gate["faithfulness"]["compared"] == block["ppi_mean"]["mean"]
    assert gate["context_recall"]["estimate"] == "judge"  # no labels for it
    assert "checked by people" in r.output and "prediction-powered" in r.output
    # the written report keeps its block: a plain `report` of it gates the same way and prints it again
    again = cli("report", out)
    assert again.exit_code == 1 and "checked by people" in again.output


def test_lower_bound_with_labels(tmp_path):
    report, path, labels = _setup(tmp_path, shift=0.0)
    on_mean = json.loads(_report_json(tmp_path, path, labels, "mean"))
    on_low = json.loads(_report_json(tmp_path, path, labels, "lower-bound"))
    m, lo = ({g["metric"]: g for g in x["gate"]["results"]}["faithfulness"] for x in (on_mean, on_low))
    ppi = on_low["spot_checks"]["metrics"]["faithfulness"]["ppi_mean"]
    assert m["compared"] == ppi["mean"] and lo["compared"] == ppi["ci_low"]
    assert lo["estimate"] == "prediction-powered" and "CI lower bound" in lo["message"]


def _report_json(tmp_path, path, labels, on):
    out = tmp_path / f"{on}.json"
    cli("report", path, "--labels", labels, "--gate-on", on, "--out", out)
    return out.read_text()


def test_labels_of_another_run_are_refused(tmp_path):
    _, path, labels = _setup(tmp_path)
    other = checked_report(seed=7)  # other texts: other item keys
    foreign = tmp_path / "other.jsonl"
    label_items(other, foreign, ("faithfulness",), n=5)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(labels.read_text() + foreign.read_text())
    r = cli("report", path, "--labels", mixed)
    assert r.exit_code == 2
    first_foreign = len(labels.read_text().splitlines()) + 1
    assert f"{mixed}, line {first_foreign}, field 'key'" in r.output
    assert f"({first_foreign - 1} of {first_foreign - 1 + len(foreign.read_text().splitlines())} label(s) match" \
        in r.output


def test_too_few_labels_keep_the_judges_gate_and_say_why(tmp_path):
    report, path, _ = _setup(tmp_path)
    few = tmp_path / "few.jsonl"
    label_items(report, few, ("faithfulness",), n=5)
    out = tmp_path / "few.json"
    r = cli("report", path, "--labels", few, "--out", out)
    assert r.exit_code == 0, r.output  # the judge's mean passes; 5 labels are not enough to overrule it
    g = {g["metric"]: g for g in json.loads(out.read_text())["gate"]["results"]}["faithfulness"]
    assert g["estimate"] == "judge" and "spot checks not used" in g["message"] and "minimum of 10" in g["message"]


def test_two_reviewers_disagreeing(tmp_path):
    report, path, labels = _setup(tmp_path)
    ben = tmp_path / "ben.jsonl"
    label_items(report, ben, ("faithfulness",), n=40, reviewer="ben", answer=lambda x: 1, limit=12)
    out = tmp_path / "two.json"
    cli("report", path, "--labels", f"{labels},{ben}", "--out", out)
    block = json.loads(out.read_text())["spot_checks"]["metrics"]["faithfulness"]
    assert block["reviewers"] == ["ana", "ben"] and block["kappa_reviewers"] == ["ana", "ben"]
    assert block["kappa_items"] == 12 and block["disagreements"] >= 1


def test_a_gap_in_the_plan_ends_the_counted_draws(tmp_path):
    report = checked_report()
    shown = plan(review_items(report, ["faithfulness"]), ["faithfulness"], 20, 0)
    path = tmp_path / "l.jsonl"
    for i, x in enumerate(shown):
        if i == 5:
            continue  # the sixth item shown was never labelled
        append_label(path, Label(key=x.item.key, sample_id=x.item.sample_id, metric="faithfulness", item=x.item.index,
                                 item_hash=x.item.key.rsplit("|", 1)[1], label=1, reviewer="ana", time="t",
                                 design=Design(seed=0, draws=x.orders, p=x.p)))
    from localragas.quality.spot_checks import read_label_files, spot_checks  # noqa: PLC0415

    block = spot_checks(report, read_label_files([path])).metrics["faithfulness"]
    assert block.draws == min(shown[5].orders) and block.not_drawn > 0


def test_eval_labels_with_the_fake_judge(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [
        {"id": f"q{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red.", "Sky is blue."],
         "answer": f"Item {i} is red. It is also heavy.", "reference": f"Item {i} is red."} for i in range(12)])
    first = tmp_path / "first.json"
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--out", first, "--no-gate")
    assert r.exit_code == 0, r.output
    from localragas.report import read_json  # noqa: PLC0415

    report = read_json(first)
    labels = tmp_path / "labels.jsonl"
    label_items(report, labels, ("faithfulness",), n=15, answer=lambda x: 1,
                **({} if report.samples[0].input else {"data": data}))
    second = tmp_path / "second.json"
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--out", second, "--labels", labels)
    assert r.exit_code in (0, 1), r.output
    block = json.loads(second.read_text())["spot_checks"]["metrics"]["faithfulness"]
    assert block["draws"] == 15 and block["labels_mean"]["mean"] == 1.0


def test_eval_labels_gates_the_report_once_with_its_spot_checks(tmp_path, monkeypatch):
    """The run's report is gated once (run/regate.py gate_report), after the spot checks are attached: the gate reads
    them (issue 49: it was gated, then gated again with them)."""
    from localragas.run import runner  # noqa: PLC0415

    data = write_jsonl(tmp_path / "d.jsonl", [
        {"id": f"q{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red.", "Sky is blue."],
         "answer": f"Item {i} is red. It is also heavy.", "reference": f"Item {i} is red."} for i in range(12)])
    first = tmp_path / "first.json"
    assert cli("eval", data, *FAST, "-m", "faithfulness", "--out", first, "--no-gate").exit_code == 0
    from localragas.report import read_json  # noqa: PLC0415

    labels = tmp_path / "labels.jsonl"
    label_items(read_json(first), labels, ("faithfulness",), n=15, answer=lambda x: 1)
    gated = []
    real = runner.gate_report
    monkeypatch.setattr(runner, "gate_report", lambda report, *a, **k: gated.append(report.spot_checks) or
                        real(report, *a, **k))
    second = tmp_path / "second.json"
    r = cli("eval", data, *FAST, "-m", "faithfulness", "--out", second, "--labels", labels)
    assert r.exit_code in (0, 1), r.output
    assert len(gated) == 1 and gated[0] is not None and gated[0].metrics["faithfulness"].draws == 15
    result = json.loads(second.read_text())["gate"]["results"][0]
    assert result["estimate"] == "prediction-powered" or "spot checks not used" in result["message"]
