"""Each sample's text is in its report (issue 47, item 10): report.json's samples hold `input` (question, answer,
contexts, reference as scored, bounded, a cut marked), the CSV and to_pandas() have the columns, the Markdown's worst
samples show the question, the HTML drill-down shows it all (tests/fast/report/test_html_drill_down.py: the drawer);
`--no-sample-text` (sample_text = false, evaluate(sample_text=False)) keeps none, recorded in meta.sample_text; the text
survives the report's other paths: results on disk, `report`, shards and `merge`."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from localragas import evaluate
from localragas.data import sample_text
from localragas.report import read_json
from localragas.run import results as run_results

from cli_helpers import cli, write_file, write_jsonl

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"
FAST = ["--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress"]
TEXT_KEYS = ["question", "answer", "contexts", "reference"]


def _rows(n: int) -> list[dict]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()[:n]]


def _as_scored(row: dict) -> dict:
    return {"question": row["question"], "answer": row["answer"], "contexts": row["contexts"],
            "reference": row.get("reference")}


def test_every_report_holds_each_samples_text_as_scored(tmp_path):
    r = cli("eval", EXAMPLES, *FAST, "-n", "4", "-t", "answer_relevancy=0.99", "--out", tmp_path / "r.json",
            "--csv", tmp_path / "r.csv", "--md", tmp_path / "r.md")
    assert r.exit_code == 1, r.output
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["meta"]["sample_text"] is True
    rows = _rows(4)
    for sample, row in zip(data["samples"], rows):
        assert list(sample["input"]) == TEXT_KEYS and sample["input"] == _as_scored(row)
        assert "input_truncated" not in sample  # written only when a bound cut something

    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert list(table[0])[:6] == ["id", "category", *TEXT_KEYS]
    assert [json.loads(t["contexts"]) for t in table] == [row["contexts"] for row in rows]
    assert [t["question"] for t in table] == [row["question"] for row in rows]

    frame = read_json(tmp_path / "r.json").to_pandas()
    assert list(frame.columns[:6]) == ["id", "category", *TEXT_KEYS]
    assert frame["contexts"].tolist() == [row["contexts"] for row in rows]
    assert frame["answer"].tolist() == [row["answer"] for row in rows]

    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "| sample | question | score | why |" in md
    assert any(f"| {row['id']} | {row['question'][:40]}" in md for row in rows)


def test_ragas_names_name_the_csv_text_columns_as_ragas_does(tmp_path):
    r = cli("eval", EXAMPLES, *FAST, "-n", "2", "--no-gate", "--ragas-names", "--csv", tmp_path / "r.csv")
    assert r.exit_code == 0, r.output
    header = (tmp_path / "r.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:6] == ["id", "category", "user_input", "response", "retrieved_contexts", "reference"]


SECRET = "ZEBRA-7731 quarterly figures"


def _secret_rows(n: int = 2) -> list[dict]:
    return [{"id": f"s{i}", "question": f"What were the {SECRET} of unit {i}?",
             "contexts": [f"The {SECRET} of unit {i} were 4 million.", "Unrelated filler text."],
             "answer": f"Unit {i} made 4 million.", "reference": f"Unit {i} made 4 million."} for i in range(n)]


def test_no_sample_text_copies_no_text_into_any_report_and_says_so(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", _secret_rows())
    outs = {"--out": "r.json", "--csv": "r.csv", "--md": "r.md", "--html": "r.html", "--junit": "r.xml"}
    r = cli("eval", data, *FAST, "--no-sample-text", "--no-gate",
            *(x for flag, name in outs.items() for x in (flag, tmp_path / name)))
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["meta"]["sample_text"] is False
    assert all("input" not in s and "input_truncated" not in s for s in report["samples"])
    for name in outs.values():  # the question and the contexts are in none of the files
        assert "ZEBRA-7731" not in (tmp_path / name).read_text(encoding="utf-8"), name
    header = (tmp_path / "r.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "question" not in header and "contexts" not in header
    assert "question" not in read_json(tmp_path / "r.json").to_pandas().columns

    # the settings file's key and evaluate()'s keyword do the same
    write_file(tmp_path, "localragas.toml", "sample_text = false\n")
    r = cli("eval", data, *FAST, "--no-gate", "--config", tmp_path / "localragas.toml", "--out", tmp_path / "f.json")
    assert r.exit_code == 0, r.output
    from_file = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    assert from_file["meta"]["sample_text"] is False and all("input" not in s for s in from_file["samples"])
    kept = evaluate(_secret_rows(), judge="fake", embedder="fake", cache=False, gate=False)
    left = evaluate(_secret_rows(), judge="fake", embedder="fake", cache=False, gate=False, sample_text=False)
    assert kept.meta["sample_text"] is True and kept.samples[0].input.question.startswith("What were the ZEBRA")
    assert left.meta["sample_text"] is False and all(s.input is None for s in left.samples)


def test_a_long_text_is_cut_to_the_bound_and_the_cut_marked(tmp_path):
    contexts = [f"Chunk {i} says the sky is blue." for i in range(sample_text.MAX_CONTEXTS + 5)]
    contexts[0] = "c" * (sample_text.MAX_TEXT_CHARS + 250)
    rows = [{"id": "long", "question": "Is the sky blue?", "answer": "The sky is blue.", "contexts": contexts,
             "reference": "The sky is blue."}, _secret_rows(1)[0]]
    r = cli("eval", write_jsonl(tmp_path / "d.jsonl", rows), *FAST, "--no-gate", "-m", "faithfulness",
            "--out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    long, short = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["samples"]
    assert long["input_truncated"] is True and "input_truncated" not in short
    kept = long["input"]["contexts"]
    assert len(kept) == sample_text.MAX_CONTEXTS
    assert kept[0] == "c" * sample_text.MAX_TEXT_CHARS + "… [cut: 250 more characters]"
    assert kept[-1] == f"{contexts[sample_text.MAX_CONTEXTS - 1]}\n… [cut: 5 more contexts]"
    assert long["input"]["question"] == "Is the sky blue?"


def test_the_text_survives_results_on_disk_report_shards_and_merge(tmp_path, monkeypatch):
    whole = tmp_path / "whole.json"
    assert cli("eval", EXAMPLES, *FAST, "-n", "5", "--no-gate", "--out", whole).exit_code == 0
    expected = [s["input"] for s in json.loads(whole.read_text(encoding="utf-8"))["samples"]]
    assert expected == [_as_scored(row) for row in _rows(5)]

    monkeypatch.setattr(run_results, "SPILL_AFTER", 2)  # the results kept on disk, read back one at a time
    spilled = tmp_path / "spilled.json"
    assert cli("eval", EXAMPLES, *FAST, "-n", "5", "--no-gate", "--out", spilled).exit_code == 0
    assert [s["input"] for s in json.loads(spilled.read_text(encoding="utf-8"))["samples"]] == expected
    monkeypatch.undo()

    again = tmp_path / "again.csv"  # `report` re-renders a stored run with its text
    assert cli("report", whole, "--no-gate", "--csv", again).exit_code == 0
    with open(again, newline="", encoding="utf-8") as f:
        assert [row["question"] for row in csv.DictReader(f)] == [t["question"] for t in expected]

    shards = [tmp_path / f"shard{i}.json" for i in (1, 2)]
    for i, path in enumerate(shards, 1):
        assert cli("eval", EXAMPLES, *FAST, "-n", "5", "--no-gate", "--shard", f"{i}/2", "--out", path).exit_code == 0
    merged = tmp_path / "merged.json"
    assert cli("merge", *shards, "--no-gate", "--out", merged).exit_code == 0
    assert [s["input"] for s in json.loads(merged.read_text(encoding="utf-8"))["samples"]] == expected

    assert cli("eval", EXAMPLES, *FAST, "-n", "5", "--no-gate", "--shard", "2/2", "--no-sample-text",
               "--out", shards[1]).exit_code == 0
    refused = cli("merge", *shards, "--no-gate", "--out", merged)
    assert refused.exit_code != 0 and "sample text kept" in refused.output, refused.output


@pytest.mark.parametrize("flags", [[], ["--no-sample-text"]])
def test_the_json_embedded_in_the_html_holds_the_text_escaped(tmp_path, flags):
    hostile = "</script><img src=x onerror=alert(1)> & <!--"
    rows = [{"id": "h", "question": f"Why {hostile}?", "contexts": [f"Chunk {hostile}"], "answer": f"It is {hostile}.",
             "reference": "It is so."}]
    page = tmp_path / "r.html"
    r = cli("eval", write_jsonl(tmp_path / "d.jsonl", rows), *FAST, "--no-gate", *flags, "--html", page)
    assert r.exit_code == 0, r.output
    html = page.read_text(encoding="utf-8")
    assert "<img src=x" not in html and "<!--" not in html.split("<body", 1)[1]
    data = json.loads(html.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0])
    if flags:
        assert "input" not in data["samples"][0] and data["meta"]["sample_text"] is False
    else:  # escaped in the page, the exact text once parsed
        assert data["samples"][0]["input"] == {"question": f"Why {hostile}?", "answer": f"It is {hostile}.",
                                               "contexts": [f"Chunk {hostile}"], "reference": "It is so."}
        assert "Chunk \\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e \\u0026 \\u003c!--" in html
