"""The HTML report's "checked by people" panel (report/html_spot_checks.py, parts/checked.html): the judge-vs-people
table, the three means, the gate's reading and the disagreeing items with the people's notes, all escaped; absent
without labels. Through the CLI: `report --labels --html`."""
from __future__ import annotations

import html

from cli_helpers import cli
from localragas.data.labels import Design, Label, append_label
from localragas.quality.review_draw import plan
from localragas.quality.review_items import review_items
from localragas.report import write_json
from spot_helpers import checked_report, truth

NOTE = "<script>__pwned=1</script> & the <b>context</b> says otherwise"


def _labelled(tmp_path, n=40):
    report = checked_report(judge_shift=0.25, thresholds={"faithfulness": 0.6, "context_recall": 0.5,
                                                          "context_precision": 0.5})
    path = tmp_path / "run.json"
    write_json(report, path)
    labels = tmp_path / "labels.jsonl"
    for x in plan(review_items(report, ["faithfulness"]), ["faithfulness"], n, 0):
        append_label(labels, Label(key=x.item.key, sample_id=x.item.sample_id, metric=x.item.metric,
                                   item=x.item.index, item_hash=x.item.key.rsplit("|", 1)[1], label=truth(x.item),
                                   reviewer="<ana>", time="2026-12-01T10:00:00+00:00", note=NOTE,
                                   design=Design(seed=x.seed, focus=x.focus, draws=x.orders, p=x.p)))
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
