"""`localragas calibrate LABELLED --fit FILE --family question_answerable` with the fake judge: generate's answerability
check asked per row, its map added to FILE beside the file's other families, each row's raw P(yes) in --out; refused,
naming the flag or the row, when it cannot be made."""
from __future__ import annotations

import json

import pytest

from localragas.judges.calibration_map import CalibrationMap, FamilyMap, load_calibration
from localragas.prompts.overrides import template_hashes

from cli_helpers import cli, write_jsonl


def wikiqa_like(path, n: int = 20):
    """n rows of a question and one chunk, labelled 1 when the chunk answers it (every other row)."""
    return write_jsonl(path, [
        {"id": f"w{i}", "question": "How tall is the tower?",
         "contexts": ["The tower is twenty-two metres tall." if i % 2 else "The keepers left in 1989."],
         "answer": "", "label": {"metric": "context_precision", "value": i % 2, "kind": "binary"}} for i in range(n)])


def test_the_family_is_added_to_the_file_and_its_other_families_kept(tmp_path):
    data, into, out = wikiqa_like(tmp_path / "wikiqa.jsonl"), tmp_path / "cal.json", tmp_path / "rows.json"
    CalibrationMap({"verify_statement": FamilyMap(1.5, 0.5)}).write(into)
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", into,
            "--family", "question_answerable", "--out", out)
    assert r.exit_code == 0, r.output
    got = load_calibration(into)
    assert set(got.families) == {"verify_statement", "question_answerable"}
    fam = got.families["question_answerable"]
    assert fam.a > 0 and fam.fitted_on == {"items": 20, "positives": 10, "source": "wikiqa.jsonl"}
    assert fam.prompt_sha256 == template_hashes(["question_answerable"])
    assert (got.families["verify_statement"].a, got.families["verify_statement"].b) == (1.5, 0.5)
    assert "wikiqa.jsonl: 20 rows, 10 labelled 1" in r.output and "ROC AUC of the raw P(yes): " in r.output
    assert "fitted question_answerable (generate): a=" in r.output and f"added to {into}" in r.output
    [result] = json.loads(out.read_text())["results"]
    assert result["metric"] == "question_answerable" and result["kind"] == "binary"
    assert [(row["id"], row["label"]) for row in result["per_row"]] == [(f"w{i}", i % 2) for i in range(20)]
    # the chunk that answers gets the higher raw P(yes) from the fake judge (word overlap)
    assert min(row["score"] for row in result["per_row"][1::2]) > max(row["score"] for row in result["per_row"][::2])


def test_a_new_file_holds_the_family_alone(tmp_path):
    data, into = wikiqa_like(tmp_path / "wikiqa.jsonl"), tmp_path / "new.json"
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", into,
            "--family", "question_answerable")
    assert r.exit_code == 0, r.output
    assert set(load_calibration(into).families) == {"question_answerable"}


@pytest.mark.parametrize("extra, message", [
    (["--family", "judge_chunk"], "--family 'judge_chunk': not a family to fit; valid: question_answerable"),
    (["--family", "question_answerable", "--md", "x.md"], "--md does not apply"),
    (["--family", "question_answerable", "--metric", "faithfulness"], "--metric does not apply"),
])
def test_a_bad_family_or_a_flag_that_does_not_apply_is_refused(tmp_path, extra, message):
    data = wikiqa_like(tmp_path / "wikiqa.jsonl")
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--fit", tmp_path / "c.json", *extra)
    assert r.exit_code == 2 and message in r.output
    assert not (tmp_path / "c.json").exists()


def test_the_family_needs_fit(tmp_path):
    r = cli("calibrate", wikiqa_like(tmp_path / "wikiqa.jsonl"), "--judge", "fake", "--family", "question_answerable")
    assert r.exit_code == 2 and "--family needs --fit FILE" in r.output


def test_a_row_without_contexts_is_named(tmp_path):
    data = write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "x", "question": "q?", "contexts": [], "answer": "",
         "label": {"metric": "context_precision", "value": 1, "kind": "binary"}}])
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", tmp_path / "c.json",
            "--family", "question_answerable")
    assert r.exit_code == 2 and "bad.jsonl:1: --family question_answerable needs a binary label and contexts" in r.output


def test_too_few_rows_of_a_class_is_refused_with_the_counts(tmp_path):
    data = wikiqa_like(tmp_path / "few.jsonl", 8)
    r = cli("calibrate", data, "--judge", "fake", "--no-progress", "--no-cache", "--fit", tmp_path / "c.json",
            "--family", "question_answerable")
    assert r.exit_code == 2 and "question_answerable (generate): 8 single-item rows of 8 (4 labelled 1" in r.output
