"""People's labels in the Markdown summary (the "checked by people" table in brief) and in JUnit (the gate test case's
message says the prediction-powered mean and the three-way reading), through `report --labels --md --junit`."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from cli_helpers import cli
from localragas.report import write_json
from spot_helpers import checked_report, label_items


def _run(tmp_path, labelled=True):
    report = checked_report(judge_shift=0.25, thresholds={"faithfulness": 0.6, "context_recall": 0.5,
                                                          "context_precision": 0.5})
    path = tmp_path / "run.json"
    write_json(report, path)
    labels = tmp_path / "labels.jsonl"
    label_items(report, labels, ("faithfulness",), n=40)
    md, junit = tmp_path / "run.md", tmp_path / "run.xml"
    r = cli("report", path, *(["--labels", labels] if labelled else []), "--md", md, "--junit", junit)
    return r, md.read_text(), ET.parse(junit).getroot()


def test_markdown_and_junit_say_what_people_found(tmp_path):
    r, md, suite = _run(tmp_path)
    assert r.exit_code == 1, r.output
    assert "**Checked by people** (" in md and "| prediction-powered | gate |" in md
    row = next(x for x in md.splitlines() if x.startswith("| faithfulness | 40 |"))
    assert "fails for sure at 0.60" in row or "undecided at 0.60" in row
    case = next(c for c in suite.iter("testcase") if c.get("name") == "faithfulness")
    failure = case.find("failure")
    assert failure is not None
    message = failure.get("message")
    assert message.startswith("faithfulness prediction-powered mean ")
    assert "checked by people (40 labelled draws): prediction-powered mean" in message
    assert "fails for sure at 0.60" in message or "undecided at 0.60" in message
    other = next(c for c in suite.iter("testcase") if c.get("name") == "context_recall")
    assert "checked by people" not in (other.find("system-out").text or "")


def test_without_labels_nothing_is_added(tmp_path):
    r, md, suite = _run(tmp_path, labelled=False)
    assert "Checked by people" not in md
    assert all("checked by people" not in ET.tostring(c, encoding="unicode") for c in suite.iter("testcase"))
