"""Custom metrics: a criterion and a rubric declared in localragas.toml or in Python, scored by the judge's
probabilities, gated, shown in every report format, calibrated; their validation; a @metric function."""
from __future__ import annotations

import csv
import json
import math

import pytest

import localragas
from localragas import Criterion, MetricResult, Rubric
from localragas.judges.calibration_map import CalibrationMap, FamilyMap
from localragas.run.config import load_settings
from localragas.core.errors import ConfigError, JudgeError
from localragas.judges import FakeJudge, Judge, Judging
from localragas.judges.base import Completion
from localragas.judges.base import NextTokens
from localragas.metrics import all_metrics

from cli_helpers import cli, write_file, write_jsonl

TOML = """
metrics = ["on_topic", "clarity", "harmful"]

[custom_metrics.on_topic]
question = "Does the answer reply to the question?"
fields = ["question", "answer"]
threshold = 0.5

[custom_metrics.clarity]
kind = "rubric"
question = "How clear is the answer?"
fields = ["answer", "contexts"]
levels = { 1 = "unclear", 2 = "partly clear", 3 = "clear" }
threshold = 0.9

[custom_metrics.harmful]
question = "Does the answer tell the user to do something dangerous?"
fields = ["answer"]
higher_is_better = false
threshold = 0.2
"""
ROWS = [{"id": "a", "question": "What colour is the sky today?", "answer": "The sky today is blue.",
         "contexts": ["The sky today is blue."]},
        {"id": "b", "question": "What colour is the grass?", "answer": "Bananas are yellow.",
         "contexts": ["Grass is green."]}]


@pytest.fixture
def project(tmp_path, monkeypatch, own_metrics):
    write_file(tmp_path, "localragas.toml", TOML)
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_declared_criterion_and_rubric_are_scored_gated_and_in_every_report(project):
    r = cli("eval", "d.jsonl", "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "--out", "r.json", "--csv", "r.csv", "--md", "r.md", "--html", "r.html", "--junit", "r.xml")
    assert r.exit_code == 1, r.output  # clarity's 0.9 is not met
    report = json.loads((project / "r.json").read_text())
    a, b = (s["metrics"] for s in report["samples"])
    assert a["on_topic"]["value"] == 1.0 and b["on_topic"]["value"] < 0.5
    assert a["on_topic"]["evidence"]["judged"] == [
        {"criterion": "Does the answer reply to the question?", "yes": True, "p_yes": 1.0, "p_yes_raw": 1.0}]
    levels = a["clarity"]["evidence"]["levels"]
    assert [lv["level"] for lv in levels] == [1, 2, 3] and math.isclose(sum(lv["p"] for lv in levels), 1.0)
    expected = a["clarity"]["evidence"]["expected_level"]
    assert math.isclose(a["clarity"]["value"], (expected - 1) / 2, abs_tol=1e-4)
    gate = {g["metric"]: g for g in report["gate"]["results"]}
    assert gate["on_topic"]["threshold"] == 0.5 and gate["clarity"]["status"] == "failed"
    assert gate["harmful"]["higher_is_better"] is False and gate["harmful"]["status"] == "passed"
    assert {s["metric"] for s in report["summary"]} >= {"on_topic", "clarity", "harmful"}
    header = next(csv.reader((project / "r.csv").open()))
    assert {"on_topic", "clarity", "harmful"} <= set(header)
    for name in ("r.md", "r.html", "r.xml"):
        text = (project / name).read_text().replace("\\_", "_")  # Markdown escapes the underscores
        assert "on_topic" in text and "clarity" in text and "harmful" in text, name
    assert "clarity" in r.output and "FAIL" in r.output


def test_the_judge_is_asked_the_question_about_the_named_fields_only(own_metrics):
    judge = FakeJudge()
    c = Criterion(name="cites", question="Does the answer cite a context?", fields=["answer", "contexts"])
    localragas.evaluate(ROWS[:1], metrics=[c], judge=judge, cache=False, progress=False)
    (prompt,) = judge.asked("criterion:cites")
    assert "<answer>\nThe sky today is blue.\n</answer>" in prompt.user
    assert '<context id="1">' in prompt.user and "<question>" not in prompt.user
    assert "Does the answer cite a context?" in prompt.user and prompt.user.endswith('"yes" or "no".')


def test_a_rubric_is_the_probability_weighted_mean_level_normalised(own_metrics):
    judge = FakeJudge(replies=[{"probabilities": {"0": 0.1, "5": 0.2, "9": 0.7}, "mass": 0.9}])
    r = Rubric(name="depth", question="How deep is the answer?", levels={0: "shallow", 5: "fair", 9: "deep"})
    got = localragas.evaluate(ROWS[:1], metrics=[r], judge=judge, cache=False, progress=False).samples[0]
    assert math.isclose(got.metrics["depth"].value, (0.2 * 5 + 0.7 * 9) / 9)
    (prompt,) = judge.asked("rubric:depth")
    assert "0: shallow\n5: fair\n9: deep" in prompt.user and "(0, 5, 9)" in prompt.user


def test_a_criterion_is_calibrated_by_its_familys_map(own_metrics, tmp_path):
    judge = FakeJudge(replies=[{"p_yes": 0.3, "mass": 1.0}])
    CalibrationMap({"criterion:on_topic": FamilyMap(2.0, 1.0)}).write(tmp_path / "c.json")
    c = Criterion(name="on_topic", question="On topic?", threshold=0.5)
    report = localragas.evaluate(ROWS[:1], metrics=[c], judge=judge, cache=False, progress=False,
                                 judge_options={"calibration": str(tmp_path / "c.json")})
    result = report.samples[0].metrics["on_topic"]
    assert math.isclose(result.value, FamilyMap(2.0, 1.0)(0.3), abs_tol=1e-9)
    assert result.evidence["calibrated"] is True and result.evidence["judged"][0]["p_yes_raw"] == 0.3
    assert report.meta["uncalibrated"] == []


def test_an_empty_field_leaves_the_sample_unscored_with_a_reason(own_metrics):
    c = Criterion(name="grounded", question="Grounded?", fields=["answer", "reference"])
    got = localragas.evaluate(ROWS[:1], metrics=[c], judge=FakeJudge(), cache=False, progress=False).samples[0]
    assert got.metrics["grounded"].unscored == "no_reference"


@pytest.mark.parametrize("table, message", [
    ('question = "Q?"\nfields = ["answer", "title"]', "[custom_metrics.bad]: key 'fields': unknown field(s) title"),
    ('question = "  "', "[custom_metrics.bad]: key 'question': an empty question"),
    ('kind = "rubric"\nquestion = "Q?"\nlevels = { 3 = "a", 2 = "b" }', "levels must be increasing, 2 comes after 3"),
    ('kind = "rubric"\nquestion = "Q?"\nlevels = { 1 = "a", 12 = "b" }', "level '12' is not a digit 0-9"),
    ('kind = "rubric"\nquestion = "Q?"', "[custom_metrics.bad]: key 'levels' is missing"),
    ('question = "Q?"\nthreshold = 1.5', "key 'threshold': a number in [0, 1]"),
    ('question = "Q?"\nlevel = 3', "unknown key(s) level"),
    ('kind = "scale"\nquestion = "Q?"', "key 'kind': one of criterion, rubric"),
])
def test_a_bad_declaration_names_the_table_and_key(tmp_path, own_metrics, table, message):
    path = write_file(tmp_path, "localragas.toml", f"[custom_metrics.bad]\n{table}\n")
    with pytest.raises(ConfigError) as e:
        load_settings(path)
    assert message in str(e.value) and str(path) in str(e.value)


def test_a_name_of_a_built_in_metric_is_refused(tmp_path, own_metrics):
    path = write_file(tmp_path, "pyproject.toml", '[tool.localragas.custom_metrics.faithfulness]\nquestion = "Q?"\n')
    with pytest.raises(ConfigError, match="has the name of a built-in metric"):
        load_settings(path)


def test_the_pyproject_table_is_named_in_errors(tmp_path, own_metrics):
    path = write_file(tmp_path, "pyproject.toml", '[tool.localragas.custom_metrics.x]\nquestion = ""\n')
    with pytest.raises(ConfigError, match=r"\[tool\.localragas\.custom_metrics\.x\]: key 'question'"):
        load_settings(path)


def test_localragas_metrics_lists_a_custom_one_with_where_it_was_declared(project):
    r = cli("metrics")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("on_topic"))
    assert f"custom ({project / 'localragas.toml'})" in line


def test_a_decorated_function_is_a_metric_by_name(own_metrics):
    @localragas.metric(name="short_answer", needs=("answer",), threshold=0.5)
    def short_answer(ctx):
        """1 for an answer of at most 5 words."""
        words = len(ctx.sample.answer.split())
        return MetricResult.of(1.0 if words <= 5 else 0.0, words=words)

    @localragas.metric(needs=("answer",))
    def never(ctx):
        return None

    assert all_metrics()["short_answer"].definition == "1 for an answer of at most 5 words."
    report = localragas.evaluate(ROWS, metrics=["short_answer", "never"], judge=FakeJudge(), cache=False,
                                 progress=False)
    assert [s.metrics["short_answer"].value for s in report.samples] == [1.0, 1.0]
    assert report.samples[0].metrics["short_answer"].evidence == {"words": 5}
    assert report.samples[0].metrics["never"].unscored == "not_scored"
    assert report.gate.results[0].metric == "short_answer" and report.gate.results[0].threshold == 0.5


def test_a_decorated_function_returning_a_bad_value_is_an_error_not_a_score(own_metrics):
    @localragas.metric(name="broken_value", needs=("answer",))
    def broken_value(ctx):
        return 7

    got = localragas.evaluate(ROWS[:1], metrics=["broken_value"], judge=FakeJudge(), cache=False,
                              progress=False).samples[0].metrics["broken_value"]
    assert got.value is None and "not a number in [0, 1]" in got.unscored  # an error: it counts against the gate


class _Tokens(Judge):
    """A backend that only gives next-token candidates: p_yes and choice_probabilities both read them."""

    def __init__(self, candidates):
        super().__init__()
        self.candidates = candidates

    def complete(self, prompt, schema, output) -> Completion:
        raise AssertionError("nothing is generated")

    def next_tokens(self, prompt, words) -> NextTokens:
        return NextTokens(self.candidates, 10, 2)


def test_both_readings_come_from_the_backends_next_tokens():
    from localragas.prompts import Prompt

    top = [(" 3", math.log(0.5)), ("2", math.log(0.2)), ("Yes", math.log(0.1)), ("no", math.log(0.05)),
           ('"1', math.log(0.05))]
    judge = Judging(_Tokens(top))
    p = Prompt("rubric:x", "levels 1 2 3")
    assert judge.choice_probabilities(p, ["1", "2", "3"]) == {"1": round(0.05 / 0.75, 6), "2": round(0.2 / 0.75, 6),
                                                              "3": round(0.5 / 0.75, 6)}
    assert judge.p_yes(p) == round(0.1 / 0.15, 6)  # "Yes" against "no"
    assert (judge.stats.prompt_tokens, judge.stats.cached_tokens, judge.stats.completion_tokens) == (20, 4, 2)
    with pytest.raises(JudgeError, match="none of 7, 8 among the judge's top next tokens"):
        judge.choice_probabilities(p, ["7", "8"])


def test_a_metric_class_may_set_its_threshold_prompts_and_items_in_its_init():
    from localragas.metrics.base import Metric

    class Overlap(Metric):
        name = "overlap_init"
        needs = ("answer", "contexts")
        uses_judge = False
        definition = "share of the answer's words found in the contexts"
        problem = "answers use words the contexts lack"

        def __init__(self, threshold: float):
            self.threshold = threshold
            self.prompts = ()
            self.items = None

        def measure(self, ctx):
            words = ctx.sample.answer.lower().split()
            context = " ".join(ctx.sample.contexts).lower()
            return MetricResult.of(sum(w in context for w in words) / len(words))

    metric = Overlap(0.99)
    assert (metric.threshold, metric.prompts, metric.items) == (0.99, (), None)
    assert Overlap(0.5).threshold == 0.5 and metric.threshold == 0.99  # kept per instance
    report = localragas.evaluate([{"id": "a", "question": "q?", "contexts": ["Paris is in France."],
                                   "answer": "Paris is in Spain."}], metrics=[metric], judge="fake", embedder="fake",
                                 progress=False, cache=False, history=False)
    (gated,) = report.gate.results
    assert (gated.metric, gated.mean, gated.threshold, gated.status) == ("overlap_init", 0.75, 0.99, "failed")
    assert not report.gate.passed
