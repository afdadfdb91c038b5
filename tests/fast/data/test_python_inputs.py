"""evaluate() in Python: every input a notebook has gives the report of the same data as a JSONL file; column names
of ragas, deepeval and promptfoo-style data; `columns=` / `--columns` / [columns]; ids; errors naming row and field;
the judge cache on by default; progress only when interactive."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel, ValidationError

import localragas
from localragas import Sample, evaluate, load_samples
from localragas.core.errors import ConfigError, DatasetError
from localragas.run.checkpoint import sample_hash
from localragas.judges.fake import FakeJudge
from localragas.run.progress import Progress, _Tqdm, progress_for
from localragas.data.sample_record import content_id

from cli_helpers import cli
from inputs_helpers import ROWS, FakeHFDataset

pytest_plugins = ["pytester"]

METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "semantic_similarity"]
RAGAS = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response", "reference": "reference"}
DEEPEVAL = {"question": "input", "contexts": "retrieval_context", "answer": "actual_output",
            "reference": "expected_output"}
PROMPTFOO = {"question": "query", "contexts": "context"}


def renamed(rows: list[dict], names: dict[str, str]) -> list[dict]:
    return [{names.get(k, k): v for k, v in r.items()} for r in rows]


def run(data, **kw):
    return evaluate(data, metrics=METRICS, judge="fake", embedder="fake", cache=False, **kw)


def scores(report) -> list:
    return [(s.id, s.category, {k: (m.value, m.unscored) for k, m in s.metrics.items()}) for s in report.samples]


@pytest.fixture
def from_file(tmp_path) -> list:
    """The scores of ROWS written as a JSONL file without ids, read by load_samples (the CLI's way)."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    samples, _ = load_samples(path)
    assert [s.id for s in samples] == [content_id(r["question"]) for r in ROWS]
    got = scores(run(samples))
    assert got[0][2]["faithfulness"][0] is not None and got[1][2]["context_recall"] == (None, "no_reference")
    return got


class SingleTurnSample(BaseModel):  # ragas's sample (pydantic), the fields evaluate() reads
    user_input: str
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    response: str | None = None
    reference: str | None = None


class FakeEvaluationDataset:
    def __init__(self, rows: list[dict], with_to_list: bool = True):
        self.samples = [SingleTurnSample(**r) for r in renamed([{k: v for k, v in r.items() if k != "category"}
                                                                for r in rows], RAGAS)]
        if with_to_list:
            self.to_list = lambda: [s.model_dump(exclude_none=True) for s in self.samples]

    def to_pandas(self):
        return pd.DataFrame([s.model_dump() for s in self.samples])


@dataclasses.dataclass
class LLMTestCase:  # deepeval's test case, as a dataclass
    input: str
    actual_output: str
    retrieval_context: list[str]
    expected_output: str | None = None
    context: list[str] | None = None  # deepeval's ideal context: not the retrieved one, ignored beside it


def _without_category(got: list) -> list:
    return [(i, None, m) for i, _, m in got]


# --- every input type: the same report as the file ----------------------------------------------------------------


@pytest.mark.parametrize("make", [
    pytest.param(lambda: [Sample(**r) for r in ROWS], id="samples"),
    pytest.param(lambda: ROWS, id="dicts"),
    pytest.param(lambda: (dict(r) for r in ROWS), id="generator"),
    pytest.param(lambda: renamed(ROWS, RAGAS), id="ragas-names"),
    pytest.param(lambda: renamed(ROWS, DEEPEVAL), id="deepeval-names"),
    pytest.param(lambda: renamed(ROWS, PROMPTFOO), id="promptfoo-names"),
    pytest.param(lambda: [Sample(**r) for r in renamed(ROWS, RAGAS)], id="Sample-with-ragas-names"),
    pytest.param(lambda: pd.DataFrame(ROWS), id="DataFrame"),
    pytest.param(lambda: pd.DataFrame(renamed(ROWS, RAGAS)), id="DataFrame-ragas-names"),
    pytest.param(lambda: FakeHFDataset(renamed(ROWS, RAGAS)), id="hf-Dataset"),
    pytest.param(lambda: {"test": FakeHFDataset(ROWS)}, id="hf-DatasetDict-one-split"),
])
def test_each_input_gives_the_scores_of_the_jsonl_file(make, from_file):
    assert scores(run(make())) == from_file


def test_a_dataframe_from_parquet_numpy_contexts_and_nan_reference(from_file):
    df = pd.DataFrame(ROWS)
    df["contexts"] = [np.array(c, dtype=object) for c in df["contexts"]]  # how read_parquet gives a list column
    assert df["reference"].isna().tolist() == [False, True, False]
    df.loc[1, "reference"] = np.nan
    df["category"] = df["category"].astype(object).where(df["category"].notna(), np.nan)
    assert scores(run(df)) == from_file


def test_a_ragas_csv_read_by_pandas_lists_as_text(tmp_path, from_file):
    """pandas.read_csv of EvaluationDataset.to_csv: the contexts cell is "['a', 'b']" text, blanks are NaN."""
    path = tmp_path / "ragas.csv"
    pd.DataFrame(ROWS).assign(retrieved_contexts=[str(r["contexts"]) for r in ROWS]).drop(columns="contexts") \
        .to_csv(path, index=False)
    df = pd.read_csv(path)
    assert isinstance(df.loc[0, "retrieved_contexts"], str) and pd.isna(df.loc[1, "reference"])
    assert scores(run(df)) == from_file


@pytest.mark.parametrize("with_to_list", [True, False], ids=["to_list", "samples"])
def test_a_ragas_evaluation_dataset(with_to_list, from_file):
    assert scores(run(FakeEvaluationDataset(ROWS, with_to_list))) == _without_category(from_file)


def test_deepeval_test_cases_with_their_ideal_context_beside(from_file):
    cases = [LLMTestCase(input=r["question"], actual_output=r["answer"], retrieval_context=r["contexts"],
                         expected_output=r.get("reference"), context=["an ideal context, not the retrieved one"])
             for r in ROWS]
    assert scores(run(cases)) == _without_category(from_file)


@pytest.mark.parametrize("as_path", [str, Path])
def test_a_path(tmp_path, from_file, as_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert scores(run(as_path(path))) == from_file


def test_promptfoo_context_text_is_one_chunk_in_files_dicts_and_samples(tmp_path):
    row = {"query": "Where is Paris?", "context": "Paris is in France.", "answer": "In France."}
    (tmp_path / "p.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "p.csv").write_text("query,context,answer\nWhere is Paris?,Paris is in France.,In France.\n")
    want = Sample(id=content_id("Where is Paris?"), question="Where is Paris?", contexts=["Paris is in France."],
                  answer="In France.")
    assert load_samples(tmp_path / "p.jsonl")[0] == [want]
    assert load_samples(tmp_path / "p.csv")[0] == [want]
    assert localragas.data.sample_inputs.as_samples([row]) == [want]
    assert Sample(**row).contexts == ["Paris is in France."]


# --- ids ----------------------------------------------------------------------------------------------------------


def test_ids_are_kept_and_missing_ones_named_by_their_question_as_in_files():
    rows = [{**ROWS[0], "id": 7}, ROWS[1], {**ROWS[2], "sample_id": " q3 "}]
    report = run(pd.DataFrame(rows))
    assert [s.id for s in report.samples] == ["7", content_id(ROWS[1]["question"]), "q3"]
    named = run([Sample(**ROWS[0]), Sample(id="x", **ROWS[1])])
    assert [s.id for s in named.samples] == [content_id(ROWS[0]["question"]), "x"]


def test_a_duplicate_id_names_both_rows():
    with pytest.raises(DatasetError) as e:
        run([{**ROWS[0], "id": "a"}, {**ROWS[1], "id": "b"}, {**ROWS[2], "id": "a"}])
    assert str(e.value) == "samples, row 3, field 'id': duplicate id 'a' (first used on row 1)"


# --- errors -------------------------------------------------------------------------------------------------------


def test_a_bad_dataframe_row_names_row_and_field_as_a_file_does():
    df = pd.DataFrame(ROWS)
    df["contexts"] = [["ok"], ["ok"], "not a list"]
    with pytest.raises(DatasetError) as e:
        run(df)
    assert str(e.value) == "DataFrame, row 3, field 'contexts': expected a list of strings, got str"
    assert (e.value.line, e.value.field, e.value.unit) == (3, "contexts", "row")
    df = pd.DataFrame(ROWS)
    df.loc[1, "answer"] = np.nan
    with pytest.raises(DatasetError, match=r"^DataFrame, row 2, field 'answer': missing required field$"):
        run(df)


def test_bad_records_of_a_list():
    with pytest.raises(DatasetError, match=r"^samples, row 2, field 'question': missing required field$"):
        run([ROWS[0], {"contexts": [], "answer": "A"}])
    with pytest.raises(DatasetError, match=r"^samples, row 2: expected a Sample or a dict, got int$"):
        run([ROWS[0], 5])
    with pytest.raises(DatasetError, match=r"got one dict: wrap it in a list"):
        run(ROWS[0])
    with pytest.raises(DatasetError, match=r"got int$"):
        run(42)
    with pytest.raises(DatasetError, match=r"'question' and 'user_input' are both given, with different values"):
        run([{**ROWS[0], "user_input": "another question"}])


def test_a_dataset_dict_of_several_splits_is_refused():
    with pytest.raises(DatasetError, match=r"2 splits \(train, test\); pass the one to evaluate"):
        run({"train": FakeHFDataset(ROWS), "test": FakeHFDataset(ROWS)})


# --- columns= -----------------------------------------------------------------------------------------------------


MINE = {"question": "q", "contexts": "docs", "answer": "out", "reference": "gold"}


def test_columns_map_fields_to_any_column(from_file):
    df = pd.DataFrame(renamed(ROWS, MINE))
    df["question"] = "a column of another meaning, not read: question is mapped"
    assert scores(run(df, columns=MINE)) == from_file
    assert scores(run(renamed(ROWS, MINE), columns=MINE)) == from_file


def test_columns_naming_a_missing_column_or_an_unknown_field_errors_clearly(tmp_path):
    with pytest.raises(DatasetError) as e:
        run(pd.DataFrame(ROWS), columns={"question": "query"})
    assert str(e.value) == ("DataFrame: columns maps 'question' to 'query', which is not a column (the columns: "
                            "question, contexts, answer, reference, category)")
    with pytest.raises(DatasetError, match=r"^samples: columns maps 'reference' to 'gold', which is not a column"):
        run(ROWS, columns={"reference": "gold"})  # optional, in no row: a typo, not silence
    with pytest.raises(DatasetError, match=r"^samples: columns maps 'question' to 'q', which is not a column \(the "
                                           r"columns: question, contexts, answer, reference, category\)$"):
        run(ROWS, columns={"question": "q"})  # a required field: the first row tells
    with pytest.raises(DatasetError, match=r"^samples, row 2, field 'q': missing required field \(mapped to"):
        run([{**ROWS[0], "q": "Q"}, ROWS[1]], columns={"question": "q"})
    with pytest.raises(ConfigError,
                       match=r"^evaluate\(\): key 'columns': unknown field 'questoin': fields: id, question, contexts"):
        run(ROWS, columns={"questoin": "q"})
    with pytest.raises(ConfigError, match=r"'user_input' is read as 'question' already"):
        run(ROWS, columns={"user_input": "q"})


def test_load_samples_takes_columns_for_jsonl_and_csv(tmp_path, from_file):
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in renamed(ROWS, MINE)))
    pd.DataFrame(renamed(ROWS, MINE)).assign(docs=[json.dumps(r["contexts"]) for r in ROWS]) \
        .to_csv(tmp_path / "m.csv", index=False)
    for name in ("m.jsonl", "m.csv"):
        samples, _ = load_samples(tmp_path / name, columns=MINE)
        assert scores(run(samples)) == from_file, name
    with pytest.raises(DatasetError, match=r"m.jsonl: columns maps 'category' to 'topic', which is not a column"):
        load_samples(tmp_path / "m.jsonl", columns={**MINE, "category": "topic"})
    with pytest.raises(DatasetError, match=r"m.csv: columns maps 'question' to 'query', which is not a column \(the "
                                           r"columns: q, docs, out, gold, category\)$"):
        load_samples(tmp_path / "m.csv", columns={**MINE, "question": "query"})


# --- Sample(...) ----------------------------------------------------------------------------------------------------


def test_sample_takes_what_files_take():
    s = Sample(user_input="Q", retrieved_contexts=np.array(["c1", "c2"]), response="A", reference=float("nan"))
    assert (s.id, s.question, s.contexts, s.answer, s.reference) == (None, "Q", ["c1", "c2"], "A", None)
    d = Sample(id=3, input="Q", retrieval_context=["c"], actual_output="A", expected_output="R",
               context=["ideal, ignored beside retrieval_context"])
    assert (d.id, d.contexts, d.reference) == ("3", ["c"], "R")
    assert Sample(id="a", question="Q", contexts=["c"], answer="A").model_dump_json() == (
        '{"id":"a","question":"Q","contexts":["c"],"answer":"A","reference":null,"category":null,'
        '"retrieved_context_ids":null,"reference_context_ids":null,"language":null,"turn":null}')
    # the fields added later are left out of a sample's hash while unset: a checkpoint's hashes stay valid
    assert sample_hash(Sample(id="a", question="Q", contexts=["c"], answer="A")) == hashlib.sha256(
        b'{"id":"a","question":"Q","contexts":["c"],"answer":"A","reference":null,"category":null}').hexdigest()
    with pytest.raises(ValidationError, match="'question' and 'user_input' are both given"):
        Sample(question="Q", user_input="other", contexts=[], answer="A")
    with pytest.raises(ValidationError, match="extra"):
        Sample(question="Q", contexts=[], answer="A", qestion="typo")


# --- the judge cache, on by default -------------------------------------------------------------------------------


def test_evaluate_caches_judge_replies_by_default_where_the_cli_does(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALRAGAS_STATE_DIR", str(tmp_path / "state"))
    first_judge, again_judge, uncached_judge = FakeJudge(), FakeJudge(), FakeJudge()
    first = evaluate(ROWS, metrics=["faithfulness"], judge=first_judge)
    assert first_judge.calls and first.meta["judge_cache"] == str(tmp_path / "state" / "cache" / "judge-cache.sqlite3")
    again = evaluate(ROWS, metrics=["faithfulness"], judge=again_judge)
    assert again_judge.calls == [] and again.meta["judge_stats"]["cache_hits"] == len(first_judge.calls)
    assert scores(again) == scores(first)
    assert not hasattr(again_judge, "cache")  # the cache is the run's, opened and closed with it
    off = evaluate(ROWS, metrics=["faithfulness"], judge=uncached_judge, cache=False)
    assert len(uncached_judge.calls) == len(first_judge.calls) and off.meta["judge_cache"] is None
    elsewhere = FakeJudge()
    evaluate(ROWS, metrics=["faithfulness"], judge=elsewhere, cache_dir=tmp_path / "other")
    assert elsewhere.calls and (tmp_path / "other" / "judge-cache.sqlite3").is_file()
    with pytest.raises(ConfigError, match="cache=False turns the judge cache off, and cache_dir names one"):
        evaluate(ROWS, judge="fake", cache=False, cache_dir=tmp_path / "other")


def test_each_run_of_one_judge_uses_its_own_cache_choice(tmp_path):
    from localragas.judges.cache import JudgeCache

    judge = FakeJudge()
    evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache_dir=tmp_path / "own")
    own = JudgeCache(tmp_path / "own")
    assert own.info()["entries"] > 0
    n = len(judge.calls)
    evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache=False)  # asked again: this run has no cache
    assert len(judge.calls) == 2 * n
    evaluate(ROWS, metrics=["faithfulness"], judge=judge, cache_dir=tmp_path / "own")  # answered by the cache
    assert len(judge.calls) == 2 * n
    own.close()


# --- progress -----------------------------------------------------------------------------------------------------


def test_progress_by_default_only_when_interactive(monkeypatch, capsys):
    bar = progress_for(3, None)
    assert isinstance(bar, Progress) and not bar.enabled  # pytest: not interactive
    run(ROWS)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys, "ps1", ">>> ", raising=False)
    assert isinstance(progress_for(3, None), _Tqdm)
    run(ROWS)
    assert "3/3" in capsys.readouterr().err  # tqdm's bar
    assert isinstance(progress_for(3, False), Progress) and not progress_for(3, False).enabled
    assert progress_for(3, True).enabled


# --- the CLI and the settings file ----------------------------------------------------------------------------------


def test_cli_columns_and_the_settings_file(tmp_path, from_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame(renamed(ROWS, MINE)).assign(docs=[json.dumps(r["contexts"]) for r in ROWS]) \
        .to_csv(tmp_path / "m.csv", index=False)
    common = ["-j", "fake", "-e", "fake", "-m", ",".join(METRICS), "--no-gate", "--no-progress", "--no-cache"]
    r = cli("eval", "m.csv", *common, "--columns", "question=q,contexts=docs", "--columns", "answer=out",
             "--columns", "reference=gold", "--out", "a.json")
    assert r.exit_code == 0, r.output
    assert scores(localragas.report.read_json(tmp_path / "a.json")) == from_file

    (tmp_path / "localragas.toml").write_text('[columns]\nquestion = "q"\ncontexts = "docs"\nanswer = "out"\n'
                                              'reference = "gold"\n')
    r = cli("eval", "m.csv", *common, "--out", "b.json")
    assert r.exit_code == 0, r.output
    assert scores(localragas.report.read_json(tmp_path / "b.json")) == from_file

    r = cli("eval", "m.csv", *common, "--columns", "reference=nothing")  # over the file's, per field
    assert r.exit_code == 2 and "columns maps 'reference' to 'nothing', which is not a column" in r.output
    r = cli("eval", "m.csv", *common, "--columns", "question")
    assert r.exit_code == 2 and "'question' must look like FIELD=COLUMN" in r.output

    (tmp_path / "localragas.toml").write_text('[columns]\nquery = "q"\n')
    r = cli("eval", "m.csv", *common)
    assert r.exit_code == 2 and "localragas.toml: key 'columns': unknown field 'query'" in r.output.replace("\n", "")


# --- the pytest fixture -------------------------------------------------------------------------------------------


def test_the_pytest_fixture_takes_the_same_inputs(pytester, tmp_path):
    pytester.makepyfile(test_inputs=f"""
import pandas as pd
ROWS = {ROWS!r}

def test_frame_and_ragas_dicts(evaluate):
    a = evaluate(pd.DataFrame(ROWS), metrics=["faithfulness"])
    b = evaluate([{{"user_input": r["question"], "retrieved_contexts": r["contexts"], "response": r["answer"]}}
                  for r in ROWS], metrics=["faithfulness"])
    assert [s.id for s in a.samples] == [s.id for s in b.samples] and all(s.id.startswith("q-") for s in a.samples)
    assert [s.metrics["faithfulness"].value for s in a.samples] == [s.metrics["faithfulness"].value for s in b.samples]
""")
    r = pytester.runpytest("--localragas-judge", "fake", "--localragas-embedder", "fake", "--localragas-no-cache")
    r.assert_outcomes(passed=1)


def test_the_notebook_bar_without_ipywidgets_is_text_without_a_warning(monkeypatch, recwarn):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # not installed: tqdm.auto would warn "IProgress not found"
    monkeypatch.setattr(sys, "ps1", ">>> ", raising=False)
    with progress_for(2, None) as bar:
        bar.advance()
        bar.advance()
    assert type(bar._bar).__module__.startswith("tqdm.std") and len(recwarn) == 0
