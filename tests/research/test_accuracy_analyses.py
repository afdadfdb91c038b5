"""research.accuracy's analyses added for issue 17 / 19, on small made-up files: paired_calibration.py --by-id pairs two
runs of other metric names by row id, and pairwise labels by pair; row_factors.py reads a row's lengths and items;
similarity_signal.py sets the embedder's similarity beside the judge's P(yes) (the hashing embedder); ranked_chunks.py
reads each chunk's own label."""
from __future__ import annotations

import json
import math

import pytest

from cli_helpers import write_jsonl
from research.accuracy import length_covariate, paired_calibration, ranked_chunks, row_factors, similarity_signal


def _run(path, file, metric, rows):
    path.write_text(json.dumps({"results": [{"file": file, "metric": metric, "kind": "binary", "per_row": rows}]}))
    return path


def _rows(scores, labels, items=None):
    return [{"id": f"r{i}", "label": y, "score": s, **({"items": items[i]} if items else {})}
            for i, (s, y) in enumerate(zip(scores, labels))]


LABELS = [1, 0, 1, 0, 1, 0, 1, 0]


def test_paired_by_id_pairs_a_built_in_with_a_criterion(tmp_path, capsys):
    base = _run(tmp_path / "a.json", "bench/ar.jsonl", "answer_relevancy",
                _rows([.4, .6, .5, .3, .2, .7, .6, .5], LABELS))
    new = _run(tmp_path / "b.json", "crit/all.jsonl", "no_irrelevant", _rows([.9, .1, .8, .2, .7, .3, .6, .4], LABELS))
    assert paired_calibration.main([str(base), str(new)]) == 0
    assert "| ar.jsonl" not in capsys.readouterr().out  # other file and metric: nothing paired without --by-id
    assert paired_calibration.main([str(base), str(new), "--by-id"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("| ar.jsonl / all.jsonl | answer_relevancy / no_irrelevant | ROC AUC | 8 | 0.312 | 1.000 |")
    assert "+0.688 [" in line


def test_paired_mean_combines_the_two_runs_row_by_row(tmp_path, capsys):
    base = _run(tmp_path / "a.json", "bench/cp.jsonl", "context_precision",
                _rows([.9, .6, .2, .3, .8, .7, .4, .1], LABELS))
    new = _run(tmp_path / "b.json", "bench/cp.jsonl", "context_precision",
               _rows([.3, .1, .9, .2, .3, .45, .8, .6], LABELS))
    assert paired_calibration.main([str(base), str(new), "--mean"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # the mean per row, labelled 1: .6 .55 .55 .6, labelled 0: .35 .25 .575 .35 -> ROC AUC 14/16 against 11/16
    assert line.startswith("| cp.jsonl | context_precision | ROC AUC | 8 | 0.688 | 0.875 | +0.188 [")


def test_paired_by_id_wants_one_result_per_run(tmp_path):
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"results": [{"file": "a", "metric": "m", "kind": "binary", "per_row": []}] * 2}))
    with pytest.raises(SystemExit):
        paired_calibration.main([str(two), str(two), "--by-id"])


def _pairwise(path, pairs, metric="answer_relevancy"):
    """pairs: (pair id, the preferred answer's score, the other's); a None score is an unscored answer."""
    rows = [{"id": f"{p}-{k}", "pair": p, "better": better, "label": float(better), "score": s}
            for p, good, bad in pairs for k, (better, s) in enumerate(((True, good), (False, bad)))]
    path.write_text(json.dumps({"results": [{"file": "bench/pairs.jsonl", "metric": metric, "kind": "pairwise",
                                             "per_row": rows}]}))
    return path


def test_paired_pairwise_labels_pair_by_pair(tmp_path, capsys):
    base = _pairwise(tmp_path / "a.json", [("p1", .9, .1), ("p2", .2, .8), ("p3", .5, .5), ("p4", .7, .3),
                                           ("p5", .6, None)], metric="ResponseRelevancy")
    new = _pairwise(tmp_path / "b.json", [("p1", .8, .2), ("p2", .9, .1), ("p3", .6, .4), ("p4", .3, .7),
                                          ("p5", .9, .1), ("p6", .9, .1)])
    assert paired_calibration.main([str(base), str(new), "--by-id"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # p5 (one answer unscored in base) and p6 (only in new) are left out; base orders p1 p4 right and ties p3:
    # 2.5 / 4; new orders p1 p2 p3 right: 3 / 4
    assert line.startswith("| pairs.jsonl | ResponseRelevancy / answer_relevancy | pairs ordered | 4 | 0.625 | 0.750 | "
                           "+0.125 [")
    with pytest.raises(SystemExit, match="pairwise"):
        paired_calibration.main([str(base), str(new), "--by-id", "--mean"])


def test_row_factors_reads_lengths_and_items(tmp_path, capsys):
    labelled = tmp_path / "rows.jsonl"
    write_jsonl(labelled, [{"id": f"r{i}", "question": "q", "contexts": ["c" * (100 * (i + 1))],
                            "answer": "a" * (i + 1), "label": {"metric": "faithfulness", "value": y, "kind": "binary"}}
                           for i, y in enumerate(LABELS)])
    items = [[{"p_supported_raw": 0.5}] * (i % 3 + 1) for i in range(8)]
    result = _run(tmp_path / "r.json", str(labelled), "faithfulness",
                  _rows([.9, .1, .8, .2, .7, .3, .6, .4], LABELS, items))
    result.write_text(result.read_text().replace('"per_row"', '"metric_options": {}, "per_row"'))
    assert row_factors.main([str(result), str(labelled)]) == 0
    out = capsys.readouterr().out
    assert "8 rows, ROC AUC 1.000" in out
    assert "| context chars | 450 |" in out and "| items | 2 |" in out
    assert "| r6 | 1 | 0.600 | 1 | 700 | 7 |" in out  # the faithful row scored lowest is listed first


def test_row_factors_by_a_meta_field(tmp_path, capsys):
    """--by meta.KEY: the score's ROC AUC within each value of the field, rows without it under (none)."""
    labelled = tmp_path / "rows.jsonl"
    sources = ["cmu", "cmu", "cmu", "cmu", "wow", "wow", "wow", None]
    write_jsonl(labelled, [{"id": f"r{i}", "question": "q", "contexts": ["c"], "answer": "a",
                            "label": {"metric": "faithfulness", "value": y, "kind": "binary"},
                            **({"meta": {"data_source": src}} if src else {})}
                           for i, (y, src) in enumerate(zip(LABELS, sources))])
    # cmu ranked right, wow backwards
    result = _run(tmp_path / "r.json", str(labelled), "faithfulness", _rows([.9, .1, .8, .2, .3, .7, .4, .5], LABELS))
    result.write_text(result.read_text().replace('"per_row"', '"metric_options": {}, "per_row"'))
    assert row_factors.main([str(result), str(labelled), "--by", "meta.data_source"]) == 0
    out = capsys.readouterr().out
    assert "| meta.data_source | rows | labelled 1 | score's ROC AUC [95% CI] |" in out
    assert "| cmu | 4 | 2 | 1.000" in out
    assert "| wow | 3 | 2 | 0.000" in out
    assert "| (none) | 1 | 0 | n/a |" in out


def test_length_covariate_takes_out_a_length_the_labels_do_not_depend_on(tmp_path, capsys):
    # P(yes) falls with the contexts' length whatever the label: logit(p) = 1.5 (2y - 1) - (ln chars - 6)
    def p_of(y, chars):
        return 1 / (1 + math.exp(-(1.5 * (2 * y - 1) - (math.log(chars) - 6))))

    specs = [(y, 100 * 10 ** (i % 3)) for i, y in enumerate(LABELS * 5)]  # 40 rows, 100 to 10,000 characters
    labelled = tmp_path / "rows.jsonl"
    write_jsonl(labelled, [{"id": f"r{i}", "question": "q", "contexts": ["c" * chars], "answer": "a",
                            "label": {"metric": "faithfulness", "value": y, "kind": "binary"}}
                           for i, (y, chars) in enumerate(specs)])
    items = [[{"p_supported_raw": p_of(y, chars)}] for y, chars in specs]
    result = _run(tmp_path / "r.json", str(labelled), "faithfulness", _rows([0.5] * 40, [y for y, _ in specs], items))
    assert length_covariate.main(["--fit-data", str(result), "--rows", str(result)]) == 0
    out = capsys.readouterr().out
    c = float(out.split(" c=")[1].split()[0])
    assert c > 0.5  # the fit finds the length's pull
    line = out.strip().splitlines()[-1]
    plain, with_length = (float(x) for x in line.split("|")[3:5])
    assert line.startswith("| rows.jsonl | 40 | ") and plain < 0.9 and with_length == 1.0  # right once length is out
    labelled.unlink()
    with pytest.raises(SystemExit, match="rows.jsonl: the labelled file this result was scored on is not there"):
        length_covariate.main(["--fit-data", str(result), "--rows", str(result)])


def _similarity_case(tmp_path):
    """8 rows: a faithful answer copies a context sentence, an unfaithful one shares no word with the contexts; the
    judge's P(yes) ranks them half right."""
    rows = [{"id": f"r{i}", "question": f"what about topic {i}?", "answer": f"Alpha beta gamma {i}." if y else
             f"Delta epsilon zeta {i}.", "contexts": [f"Alpha beta gamma {i}. Something else entirely {i}."],
             "label": {"metric": "faithfulness", "value": y, "kind": "binary"}} for i, y in enumerate(LABELS)]
    labelled = tmp_path / "faith.jsonl"
    write_jsonl(labelled, rows)
    judge = [.6, .6, .4, .4, .6, .6, .4, .4]
    items = [[{"claim": row["answer"], "p_supported_raw": p}] for row, p in zip(rows, judge)]
    return labelled, _run(tmp_path / "r.json", str(labelled), "faithfulness", _rows(judge, LABELS, items))


def test_similarity_signal_scores_each_statement_against_the_context_sentences(tmp_path, capsys):
    labelled, result = _similarity_case(tmp_path)
    assert similarity_signal.main([str(result), "--all-rows", str(labelled), "--embedder", "fake"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    line = next(x for x in out if x.startswith("| r.json"))
    cells = [c.strip() for c in line.split("|")[1:-1]]
    assert cells[:3] == ["r.json", "faith.jsonl", "8"]
    assert cells[3].startswith("0.500") and cells[4].startswith("1.000")  # the judge at chance, the similarity right
    assert cells[6].startswith("+")  # both − judge: the combination gains on the judge alone
    assert out[-1].startswith("| faith.jsonl | 8 | 1.000") and "| — | 1.000 [" in out[-1]


def test_similarity_signal_reads_context_precision_chunks_and_names_a_missing_file(tmp_path, capsys):
    rows = [{"id": f"r{i}", "question": "alpha beta gamma?", "contexts": ["alpha beta gamma delta" if y else
             "nothing shared here"], "label": {"metric": "context_precision", "value": y, "kind": "binary"}}
            for i, y in enumerate(LABELS)]
    labelled = tmp_path / "cp.jsonl"
    write_jsonl(labelled, rows)
    items = [[{"rank": 1, "p_relevant_raw": .5}] for _ in rows]
    result = _run(tmp_path / "cp.json", str(labelled), "context_precision", _rows([.5] * 8, LABELS, items))
    assert similarity_signal.main([str(result), "--embedder", "fake"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("| cp.json | cp.jsonl | 8 | 0.500") and "| 1.000 [" in line
    labelled.unlink()
    with pytest.raises(SystemExit, match="cp.jsonl: the labelled file this result was scored on is not there"):
        similarity_signal.main([str(result), "--embedder", "fake"])


def test_ranked_chunks_reads_each_chunks_own_label(tmp_path, capsys):
    # 4 lists of 3 chunks; the relevant chunk scored 0.8, the others 0.2 and 0.75: right at 0.70 except one per list
    rows = [{"id": f"l{i}", "question": "q", "contexts": ["a", "b", "c"], "meta": {"relevance": [0, 1, 0]},
             "label": {"metric": "context_precision", "value": 0.5, "kind": "graded"}} for i in range(4)]
    labelled = write_jsonl(tmp_path / "ranked.jsonl", rows)
    per_row = [{"id": f"l{i}", "score": 0.5, "items": [{"rank": 1, "p_relevant": 0.2}, {"rank": 2, "p_relevant": 0.8},
                                                        {"rank": 3, "p_relevant": 0.75}]} for i in range(4)]
    result = tmp_path / "cp.json"
    result.write_text(json.dumps({"results": [{"file": str(labelled), "metric": "context_precision", "kind": "graded",
                                               "per_row": per_row}]}))
    assert ranked_chunks.main([str(result), "--threshold", "0.70"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # ROC AUC 1; at 0.70: TPR 1, TNR 1/2 -> 0.75; at the best threshold (0.8) 1
    assert line.startswith("| cp.json | ranked.jsonl | 4 | 12 (4) | 1.000 [1.000, 1.000] | 0.750 [0.750, 0.750] | "
                           "1.000")
    rows[2]["meta"]["relevance"] = [0, 1]
    write_jsonl(labelled, rows)
    with pytest.raises(SystemExit, match="ranked.jsonl:3: meta.relevance must hold one 0/1 per chunk of contexts"):
        ranked_chunks.main([str(result)])


def test_paired_at_a_threshold_adds_balanced_accuracy_at_the_gate(tmp_path, capsys):
    base = _run(tmp_path / "a.json", "bench/cp.jsonl", "context_precision",
                _rows([.9, .6, .2, .3, .8, .7, .4, .1], LABELS))
    new = _run(tmp_path / "b.json", "bench/cp.jsonl", "context_precision",
               _rows([.9, .1, .9, .2, .3, .45, .8, .6], LABELS))
    assert paired_calibration.main([str(base), str(new), "--at", "0.5"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("| cp.jsonl | context_precision | ROC AUC | 8 |")
    # at 0.5: base says good for .9 .6 .8 .7 (2 of 4 labelled 1, 2 of 4 labelled 0 wrongly): 0.5; new for .9 .9 .8 .6
    # (3 of 4 labelled 1, 1 of 4 labelled 0): 0.75
    assert lines[-1].startswith("| cp.jsonl | context_precision | balanced accuracy at 0.5 | 8 | 0.500 | 0.750 | +0.250 [")
