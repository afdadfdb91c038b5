"""The judge's window check sizes what is really asked: a prompt family's overridden instruction text (not the
built-in one it replaces) and a custom criterion's or rubric's own prompt, refusing a too-long one before the run with
an error naming it, like the built-ins."""
from __future__ import annotations

import pytest

import localragas
from localragas import Criterion, Rubric
from localragas.judge_calls.window import check_window, needed_window
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge, Judging
from localragas.prompts.overrides import load_overrides

ROWS = [{"id": "a", "question": "What colour is the sky?", "answer": "The sky is blue.",
         "contexts": ["The sky is blue."], "reference": "Blue."}]
SENTENCES = {"faithfulness": {"statements": "sentences"}}  # no extract_claims: only the support question is sized
LONG = "Say yes only when a context states the statement word for word. " * 120  # ~7,800 characters


def run(judge, metrics, **kw):
    return localragas.evaluate(ROWS, metrics=metrics, judge=judge, cache=False, progress=False, **kw)


def test_an_overridden_instruction_is_sized_by_its_own_text(tmp_path):
    long_file, short_file = tmp_path / "long.txt", tmp_path / "short.txt"
    long_file.write_text(LONG)
    short_file.write_text("Say yes when the contexts state it.")
    built_in = needed_window(FakeJudge(), "verify_statement")
    judge = FakeJudge(n_ctx=built_in + 200)  # the built-in text fits
    with pytest.raises(ConfigError) as e:
        run(judge, ["faithfulness"], prompts={"verify_statement": long_file}, metric_options=SENTENCES)
    assert (f"n_ctx={built_in + 200} tokens, but the verify_statement prompt (its instruction text from {long_file}) "
            "needs at least") in str(e.value)
    assert "shorten that text, or raise it, e.g. --judge-option n_ctx=4096" in str(e.value)
    assert judge.calls == []  # refused before any judging
    asked = Judging(judge, prompts=load_overrides({"verify_statement": str(long_file)}))
    assert needed_window(asked, "verify_statement") > built_in + 200  # sized as the run asks it
    judge = FakeJudge(n_ctx=built_in)  # exactly the built-in's need: a shorter override needs less, and runs
    report = run(judge, ["faithfulness"], prompts={"verify_statement": short_file}, metric_options=SENTENCES)
    assert report.samples[0].metrics["faithfulness"].value is not None
    assert "Say yes when the contexts state it." in judge.asked("verify_statement")[0].user


def test_the_contradiction_questions_override_is_sized_too(tmp_path):
    long_file = tmp_path / "long.txt"
    long_file.write_text(LONG)
    judge = FakeJudge(n_ctx=max(needed_window(FakeJudge(), f) for f in ("verify_statement", "contradict_statement"))
                      + 100)
    with pytest.raises(ConfigError) as e:
        run(judge, ["faithfulness"], prompts={"contradict_statement": long_file},
            metric_options={"faithfulness": {"statements": "sentences", "question": "both"}})
    assert f"but the contradict_statement prompt (its instruction text from {long_file}) needs at least" in str(e.value)
    assert judge.calls == []


def test_a_too_long_criterion_or_rubric_is_refused_naming_it(own_metrics):
    criterion = Criterion(name="long_criterion", question=LONG, fields=["question", "answer"])
    rubric = Rubric(name="long_rubric", question="How clear is it?", levels={1: LONG, 2: "clear"})
    short = Criterion(name="short_criterion", question="Does the answer reply?", fields=["question", "answer"])
    judge = FakeJudge(n_ctx=1024)
    for metric, family in ((criterion, "criterion:long_criterion"), (rubric, "rubric:long_rubric")):
        with pytest.raises(ConfigError) as e:
            run(judge, [metric])
        assert (f"n_ctx=1024 tokens, but the {family} prompt (the custom metric's own question) needs at least"
                in str(e.value)) and "shorten the question, or raise it" in str(e.value)
    assert judge.calls == []
    assert run(judge, [short]).samples[0].metrics["short_criterion"].value is not None
    assert "Does the answer reply?" in judge.asked("criterion:short_criterion")[0].user
    assert needed_window(judge, "criterion:short_criterion", short.window_prompts) < 1024


def test_check_window_skips_a_family_of_unknown_size():
    check_window(FakeJudge(n_ctx=64), ["a_plugins_prompt"])  # a plugin metric's prompt: nothing known to size


def test_during_the_run_the_contexts_are_fitted_around_the_overridden_text(tmp_path):
    """A window that holds the built-in support question with all the contexts, but not the user's longer one: the
    contexts are judged in groups (a warning in the evidence) rather than sent past the window."""
    instruction = tmp_path / "long.txt"
    instruction.write_text("Say yes only when a context states the statement word for word. " * 20)
    contexts = [f"Fact {i}: the sky over the town of Ash was blue on day {i} of the long summer." * 2 for i in range(8)]
    rows = [{**ROWS[0], "contexts": contexts}]
    budget = needed_window(FakeJudge(), "verify_statement") + 500

    def asked(prompts=None):
        judge = FakeJudge(n_ctx=budget)
        report = localragas.evaluate(rows, metrics=["faithfulness"], judge=judge, cache=False, progress=False,
                                     metric_options=SENTENCES, prompts=prompts)
        return len(judge.asked("verify_statement")), report.samples[0].metrics["faithfulness"].evidence

    plain, evidence = asked()
    assert plain == 1 and "warnings" not in evidence
    split, evidence = asked({"verify_statement": instruction})
    assert split > 1 and evidence["warnings"]
