"""The people's labels file (data/labels.py): atomic appends from two processes, a torn line reported, a malformed
line named with its field, last-line-wins per reviewer, the CSV round trip and its row / column errors."""
from __future__ import annotations

import csv
import json
import multiprocessing

import pytest

from localragas.core.errors import LabelsError
from localragas.data.labels import Design, Label, append_label, export_csv, import_csv, latest, read_labels


def lab(i: int = 0, label: int | None = 1, reviewer: str = "ana", note: str = "") -> Label:
    return Label(key=f"s{i}|faithfulness|0|{i:016x}", sample_id=f"s{i}", metric="faithfulness", item=0,
                 item_hash=f"{i:016x}", label=label, reviewer=reviewer, time="2026-12-01T10:00:00+00:00", note=note,
                 design=Design(seed=0, draws=(i,), p=0.25))


def _append_many(path: str, who: str, count: int) -> None:
    for i in range(count):
        append_label(path, lab(i, i % 2, who, note="x" * 3000))  # lines longer than a pipe's atomic size


def test_two_processes_appending_never_interleave(tmp_path):
    path = tmp_path / "labels.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(path), who, 60)) for who in ("ana", "ben")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    got = read_labels(path)
    assert len(got) == 120
    assert {who: sum(1 for x in got if x.reviewer == who) for who in ("ana", "ben")} == {"ana": 60, "ben": 60}


def test_round_trip_and_source(tmp_path):
    path = tmp_path / "l.jsonl"
    append_label(path, lab(1))
    append_label(path, lab(2, None, note="unsure"))
    got = read_labels(path)
    assert [(x.key, x.label, x.note) for x in got] == [(lab(1).key, 1, ""), (lab(2).key, None, "unsure")]
    assert (got[1].source, got[1].line) == (str(path), 2)
    line = json.loads(path.read_text().splitlines()[0])
    assert set(line) == {"v", "key", "sample_id", "metric", "item", "item_hash", "label", "reviewer", "time", "note",
                         "design"}
    assert line["design"] == {"seed": 0, "focus": "uniform", "draws": [1], "p": 0.25}


def test_torn_last_line_is_reported_and_a_new_append_stays_whole(tmp_path):
    path = tmp_path / "l.jsonl"
    append_label(path, lab(1))
    with open(path, "ab") as f:
        f.write(b'{"v": 1, "key": "s2|faith')  # a write cut short by another program
    with pytest.raises(LabelsError, match=r"line 2: the last line is cut short"):
        read_labels(path)
    append_label(path, lab(3))  # the torn line is not glued to the new one
    with pytest.raises(LabelsError, match=r"line 2: not a JSON object"):
        read_labels(path)
    assert json.loads(path.read_text().splitlines()[2])["key"] == lab(3).key


def test_malformed_line_names_file_line_and_field(tmp_path):
    path = tmp_path / "l.jsonl"
    append_label(path, lab(1))
    bad = lab(2).model_dump(mode="json")
    bad["label"] = 2
    with open(path, "a") as f:
        f.write(json.dumps(bad) + "\n")
    with pytest.raises(LabelsError) as e:
        read_labels(path)
    assert str(e.value).startswith(f"{path}, line 2, field 'label':")


def test_malformed_line_exits_2_through_the_cli(tmp_path):
    from cli_helpers import cli  # noqa: PLC0415
    from localragas.report import write_json  # noqa: PLC0415
    from reports_helpers import make_report  # noqa: PLC0415

    report = tmp_path / "r.json"
    write_json(make_report({"a": {"faithfulness": 0.5}}), report)
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"v": 1, "key": "a|faithfulness|0|00", "label": "maybe"}\n')
    result = cli("report", report, "--labels", labels)
    assert result.exit_code == 2
    assert f"{labels}, line 1, field" in result.output


def test_a_reviewer_s_later_line_wins_and_reviewers_stay_apart(tmp_path):
    path = tmp_path / "l.jsonl"
    for x in (lab(1, 1, "ana"), lab(1, 0, "ben"), lab(1, 0, "ana")):
        append_label(path, x)
    by_item = latest(read_labels(path))
    assert {r: x.label for r, x in by_item[lab(1).key].items()} == {"ana": 0, "ben": 0}


def test_csv_export_import_round_trip(tmp_path):
    path = tmp_path / "sheet.csv"
    assert export_csv([lab(1), lab(2, 0, "ben", "wrong date"), lab(3, None)], path) == 3
    got = import_csv(path)
    assert [(x.key, x.label, x.reviewer, x.note, x.design) for x in got] == [
        (lab(1).key, 1, "ana", "", lab(1).design), (lab(2).key, 0, "ben", "wrong date", lab(2).design),
        (lab(3).key, None, "ana", "", lab(3).design)]


def test_csv_import_names_row_and_column(tmp_path):
    path = tmp_path / "sheet.csv"
    export_csv([lab(1), lab(2)], path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    rows[1]["label"] = "perhaps"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(LabelsError, match=r"sheet.csv, row 3, column 'label': 'perhaps' is not a label"):
        import_csv(path)


def test_csv_rows_not_yet_labelled_are_left_out_and_reviewer_defaults(tmp_path):
    path = tmp_path / "sheet.csv"
    path.write_text("key,label,reviewer,note\n"
                    "a|faithfulness|0|abc,yes,,\n"
                    "a|faithfulness|1|abd,,,\n")
    with pytest.raises(LabelsError, match=r"row 2, column 'reviewer'"):
        import_csv(path)
    got = import_csv(path, reviewer="cleo")
    assert [(x.sample_id, x.item, x.label, x.reviewer, x.design) for x in got] == [("a", 0, 1, "cleo", None)]
