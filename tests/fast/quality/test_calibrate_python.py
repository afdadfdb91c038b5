"""localragas.calibrate() from Python: labelled rows as a DataFrame (label as an object or as label.metric /
label.kind / label.value columns), dicts under ragas's names, a datasets.Dataset or paths give what `localragas
calibrate` gives for the same rows in a file; errors name the row and field; the judge cache as for evaluate()."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import localragas
from localragas.quality.calibration_results import Calibration, CalibrationRun
from localragas.quality.labelled import read_labelled
from localragas.core.errors import ConfigError, DatasetError
from localragas.judges import FakeJudge
from calibration_helpers import faith_row, pair_rows
from cli_helpers import cli, write_jsonl as write_rows
from inputs_helpers import FakeHFDataset

FAKE = {"judge": "fake", "embedder": "fake"}


def labelled_rows(graded: bool = False) -> list[dict]:
    """Binary faithfulness labels, two answer-relevancy pairs between them (and graded context-recall labels: their
    Spearman bootstrap takes most of a second, so only where they are the point)."""
    faith = [faith_row(1, "The Eiffel Tower is in Paris.", 1), faith_row(2, "It is in Rome.", 0),
             faith_row(3, "It was completed in 1889.", 1), faith_row(4, "It was completed in 1920 in Berlin.", 0)]
    recall = [{"id": f"r{i}", "question": "When was the Eiffel Tower completed?",
               "contexts": ["The Eiffel Tower was completed in 1889."], "answer": "In 1889.", "reference": ref,
               "label": {"metric": "context_recall", "kind": "graded", "value": v}}
              for i, (ref, v) in enumerate([("It was completed in 1889.", 1.0), ("It is 330 metres tall.", 0.0),
                                            ("It was completed in 1889 and is in Paris.", 0.5)])]
    pairs = pair_rows("p1", "Paris is the capital of France.", "I like trains.") + \
        pair_rows("p2", "The capital of France is Paris.", "Cheese is made from milk.")
    rows = [faith[0], pairs[0], faith[1], *(recall if graded else []), pairs[1], faith[2], *pairs[2:], faith[3]]
    return [{k: v for k, v in r.items() if k not in ("source", "meta")} for r in rows]


def cli_run(path, *args) -> CalibrationRun:
    out = path.with_suffix(".out.json")
    r = cli("calibrate", str(path), "--judge", "fake", "--embedder", "fake", "--no-progress",
            "--out", str(out), *args)
    assert r.exit_code == 0, r.output
    return CalibrationRun.model_validate_json(out.read_text())


def figures(run: CalibrationRun) -> list[tuple]:
    """What must be equal between two runs on the same rows: per result its counts, figures and per-row scores."""
    return [(c.metric, c.kind, c.rows, c.pairs, c.scored, c.unscored, c.unscored_reasons, c.agreement.model_dump(),
             [(o.id, o.label, o.score, o.unscored, o.pair, o.better) for o in c.per_row]) for c in run.results]


@pytest.fixture(scope="module")
def jsonl_run(tmp_path_factory):
    """`localragas calibrate` on labelled_rows() in a JSONL file."""
    return cli_run(write_rows(tmp_path_factory.mktemp("jsonl") / "labelled.jsonl", labelled_rows()))


def test_a_dataframe_with_label_objects_or_label_columns_agrees_with_the_cli_on_the_same_file(tmp_path):
    rows = labelled_rows(graded=True)
    from_file = cli_run(write_rows(tmp_path / "labelled.jsonl", rows))
    run = localragas.calibrate(pd.DataFrame(rows), **FAKE)
    assert [(c.metric, c.kind) for c in run.results] == [("faithfulness", "binary"),
                                                         ("answer_relevancy", "pairwise"),
                                                         ("context_recall", "graded")]
    assert figures(run) == figures(from_file)
    assert all(c.file == "DataFrame" and c.dataset_sha256 is None for c in run.results)
    assert from_file.results[0].per_row[1].line == 3 and run.results[0].per_row[1].line == 3  # row 3, line 3
    flat = pd.json_normalize(rows)  # label.metric, label.kind, label.value columns
    assert {"label.metric", "label.kind", "label.value"} <= set(flat.columns) and "label" not in flat.columns
    assert figures(localragas.calibrate(flat, **FAKE)) == figures(from_file)


def test_a_frame_built_by_hand_with_gaps_in_pair_and_better(jsonl_run):
    """NaN in pair / better / label.value on the rows that do not need them; pandas makes the int pair ids float."""
    rows = labelled_rows()
    frame = pd.DataFrame({
        "id": [r["id"] for r in rows], "question": [r["question"] for r in rows],
        "contexts": [r["contexts"] for r in rows], "answer": [r["answer"] for r in rows],
        "reference": [r.get("reference") for r in rows],
        "label.metric": [r["label"]["metric"] for r in rows], "label.kind": [r["label"]["kind"] for r in rows],
        "label.value": [None if r["label"]["kind"] == "pairwise" else r["label"]["value"] for r in rows],
        "pair": [int(r["pair"][1]) if "pair" in r else None for r in rows],
        "better": [r.get("better") for r in rows],
    })
    assert frame["pair"].dtype == float
    run = localragas.calibrate(frame, **FAKE)
    expected = figures(jsonl_run)
    for got, want in zip(figures(run), expected):  # the pair ids read "1", "2" instead of "p1", "p2"
        assert got[:8] == want[:8]
    assert {o.pair for o in run.results[1].per_row} == {"1", "2"}


def test_dicts_under_ragas_names_and_a_dataset(jsonl_run):
    ragas = [{"user_input": r["question"], "retrieved_contexts": r["contexts"], "response": r["answer"],
              **({"reference": r["reference"]} if r.get("reference") else {}),
              **{k: r[k] for k in ("id", "label", "pair", "better") if k in r}} for r in labelled_rows()]
    assert figures(localragas.calibrate(ragas, **FAKE)) == figures(jsonl_run)
    run = localragas.calibrate(FakeHFDataset(ragas), **FAKE)
    assert figures(run) == figures(jsonl_run) and run.results[0].file == "Dataset"


def test_the_columns_mapping(jsonl_run):
    frame = pd.DataFrame(labelled_rows()).rename(columns={"question": "prompt", "contexts": "docs", "answer": "output"})
    mapping = {"question": "prompt", "contexts": "docs", "answer": "output"}
    assert figures(localragas.calibrate(frame, columns=mapping, **FAKE)) == figures(jsonl_run)
    with pytest.raises(DatasetError, match="DataFrame: columns maps 'question' to 'promt', which is not a column"):
        localragas.calibrate(frame, columns={**mapping, "question": "promt"}, **FAKE)


def test_the_columns_mapping_on_a_file_from_python_and_the_cli(tmp_path, jsonl_run):
    renamed = [{("prompt" if k == "question" else k): v for k, v in r.items()} for r in labelled_rows()]
    path = write_rows(tmp_path / "renamed.jsonl", renamed)
    assert figures(localragas.calibrate(path, columns={"question": "prompt"}, **FAKE)) == figures(jsonl_run)
    assert figures(cli_run(path, "--columns", "question=prompt")) == figures(jsonl_run)
    with pytest.raises(DatasetError, match="columns maps 'question' to 'promt', which is not a column"):
        localragas.calibrate(path, columns={"question": "promt"}, **FAKE)


@pytest.mark.parametrize("change, field, message", [
    (lambda r: r.pop("label"), "label", "missing: a labelled row needs label: {metric, value, kind} (in a table: "
                                        "columns label.metric, label.kind, label.value)"),
    (lambda r: r.update(label=None), "label", "missing: a labelled row needs label"),
    (lambda r: r["label"].update(kind="ordinal"), "label.kind", "expected one of binary, graded, pairwise"),
    (lambda r: r["label"].update(value=0.5), "label.value", "a binary label is 0 or 1, got 0.5"),
    (lambda r: r.update({"label.value": 1}), "label", "given twice, as label and as columns label.metric"),
    (lambda r: r.pop("answer"), "answer", "missing required field"),
    (lambda r: r.update(id="f1"), "id", "duplicate id 'f1' (first used on row 1)"),
])
def test_a_bad_row_is_named_by_its_row_and_field(change, field, message):
    rows = labelled_rows()
    change(rows[2])
    for data, name in ((rows, "samples"), (pd.DataFrame(rows), "DataFrame")):
        with pytest.raises(DatasetError) as e:
            localragas.calibrate(data, **FAKE)
        assert str(e.value).startswith(f"{name}, row 3, field '{field}': {message}"), str(e.value)


def test_a_flat_label_with_a_bad_value_names_the_column():
    flat = pd.json_normalize(labelled_rows())
    flat.loc[2, "label.kind"] = "ordinal"
    with pytest.raises(DatasetError, match=r"DataFrame, row 3, field 'label.kind': expected one of binary"):
        localragas.calibrate(flat, **FAKE)


def test_pairs_from_a_dataframe_are_checked_and_kept_whole_by_limit():
    frame = pd.DataFrame(labelled_rows())
    run = localragas.calibrate(frame, limit=2, **FAKE)  # f1, then p1-a: its pair comes whole
    assert [[o.id for o in c.per_row] for c in run.results] == [["f1"], ["p1-a", "p1-b"]]
    assert run.meta["limit"] == 2
    broken = frame[frame["id"] != "p1-b"]
    with pytest.raises(DatasetError, match="DataFrame, row 2, field 'pair': pair 'p1' has one row; a pair needs two"):
        localragas.calibrate(broken, **FAKE)
    three = pd.concat([frame, frame[frame["id"] == "p1-b"].assign(id="p1-c")], ignore_index=True)
    with pytest.raises(DatasetError, match=r"row 9, field 'pair': pair 'p1' has more than two rows \(rows 2, 4, 9\)"):
        localragas.calibrate(three, **FAKE)


def test_paths_a_list_of_paths_and_an_already_read_source(tmp_path, jsonl_run):
    a = write_rows(tmp_path / "a.jsonl", labelled_rows())
    b = write_rows(tmp_path / "b.jsonl", labelled_rows()[::2][:2])
    assert figures(localragas.calibrate(str(a), **FAKE)) == figures(jsonl_run)
    run = localragas.calibrate([a, str(b)], **FAKE)
    assert run.meta["files"] == [str(a), str(b)] and [c.file for c in run.results][-1] == str(b)
    assert figures(localragas.calibrate(read_labelled(a), **FAKE)) == figures(jsonl_run)
    assert run.results[0].dataset_sha256 == jsonl_run.results[0].dataset_sha256


def test_the_judge_cache_is_on_by_default_as_in_the_cli(tmp_path):
    rows = labelled_rows()
    first = localragas.calibrate(rows, **FAKE)
    again = localragas.calibrate(pd.DataFrame(rows), **FAKE)
    assert sum(c.judge_calls for c in first.results) > 0 and first.meta["judge_cache"].endswith("judge-cache.sqlite3")
    assert sum(c.judge_calls for c in again.results) == 0 and sum(c.cache_hits for c in again.results) > 0
    path = write_rows(tmp_path / "l.jsonl", rows)
    assert sum(c.judge_calls for c in cli_run(path).results) == 0  # the CLI reads the same cache
    off = localragas.calibrate(rows, cache=False, **FAKE)
    assert sum(c.cache_hits for c in off.results) == 0 and off.meta["judge_cache"] is None
    elsewhere = localragas.calibrate(rows, cache_dir=tmp_path / "other", **FAKE)
    assert elsewhere.meta["judge_cache"].startswith(str(tmp_path / "other"))
    with pytest.raises(ConfigError, match="cache=False turns the judge cache off, and cache_dir names one"):
        localragas.calibrate(rows, cache=False, cache_dir=tmp_path / "other", **FAKE)


def test_a_judge_instance_is_left_open_and_keeps_its_own_cache_choice():
    judge = FakeJudge()
    run = localragas.calibrate(labelled_rows(), judge, embedder="fake", cache=False)
    assert run.meta["judge"]["name"] == "fake" and not hasattr(judge, "cache")
    judge.close()


def test_the_run_and_each_result_print_in_a_few_lines():
    run = localragas.calibrate(pd.DataFrame(labelled_rows()), **FAKE)
    text = repr(run)
    assert text.splitlines()[0] == "<localragas CalibrationRun: 2 results, judge fake, calibration: none>"
    assert text.splitlines()[1].startswith("  scores of faithfulness are the judge's raw P(yes), not a share a person "
                                           "would count: no calibration for judge fake")
    assert "  DataFrame: faithfulness (binary labels), rows 4, scored" in text
    assert "    ROC AUC " in text and "    pairs ordered right " in text
    assert len(text.splitlines()) < 15 and str(run) == text
    assert isinstance(run.results[0], Calibration) and repr(run.results[0]).startswith("DataFrame: faithfulness")
    assert "per_row" not in text


def test_the_name_is_the_function_whatever_was_imported_before():
    import localragas.quality.calibration  # noqa: F401, PLC0415

    assert localragas.calibrate is localragas.quality.calibration.calibrate and "calibrate" in localragas.__all__


def test_nothing_given_or_one_dict_is_refused():
    with pytest.raises(DatasetError, match="samples: no samples"):
        localragas.calibrate([], **FAKE)
    with pytest.raises(DatasetError, match="expected a list of samples, got one dict"):
        localragas.calibrate(labelled_rows()[0], **FAKE)
    assert json.dumps(labelled_rows())  # the fixture rows are plain JSON
