"""The HTML report's "checked by people" panel (report/html_spot_checks.py, parts/checked.html): the judge-vs-people
table, the three means, the gate's reading and the disagreeing items with the people's notes, all escaped; absent
without labels. Through the CLI: `report --labels --html`."""
from __future__ import annotations

import html

from cli_helpers import cli
from localragas.report import write_json
from spot_helpers import checked_report, label_items

NOTE = "<script>__pwned=1</script> & the <b>context</b> says otherwise"


def _labelled(tmp_path, n=40):
    report = checked_report(judge_shift=0.25, thresholds={"faithfulness": 0.6, "context_recall": 0.5,
                                                          "context_precision": 0.5})
    path = tmp_path / "run.json"
    write_json(report, path)
    labels = tmp_path / "labels.jsonl"
    label_items(report, labels, ("faithfulness",), n=n, reviewer="<ana>", note=NOTE)
    return path, labels


def test_report_labels_html_has_the_checked_by_people_panel_escaped(tmp_path):
    path, labels = _labelled(tmp_path)
    page_path = tmp_path / "page.html"
    r = cli("report", path, "--labels", labels, "--html", page_path)
    assert r.exit_code == 1, r.output  # the people's share is below the biased judge's: fails on the PPI mean
    page = page_path.read_text()
    assert '<section id="checked">' in page and 'href="#checked"' in page
    panel = page.split('<section id="checked">', 1)[1].split("</section>", 1)[0]
    for words in ("accuracy", "balanced accuracy", "ROC AUC", "judge only", "labels only", "prediction-powered",
                  "judge bias", "effective number of labels", "Where the judge and the people disagree"):
        assert words in panel, words
    assert "Gate: fails for sure at 0.60" in panel or "Gate: undecided at 0.60" in panel
    assert html.escape(NOTE, quote=False) in panel and "<script>__pwned" not in page
    assert "&lt;ana&gt;" in panel and "<ana>" not in page
    assert "Content-Security-Policy" in page


def test_no_panel_without_labels(tmp_path):
    path, _ = _labelled(tmp_path)
    page_path = tmp_path / "page.html"
    cli("report", path, "--html", page_path)
    page = page_path.read_text()
    assert 'id="checked"' not in page and 'href="#checked"' not in page
