"""Real tier: a custom criterion and rubric with the default judge (llama.cpp): the next-token readings behind
Judge.p_yes and Judge.choice_probabilities, and scores that tell an on-topic answer from an off-topic one."""
from __future__ import annotations

import math

import localragas
from localragas import Criterion, Rubric
from localragas.judges.yes_no import YES_NO, p_yes
from localragas.judges import Judging
from localragas.prompts.custom import criterion_prompt, rubric_prompt

ON = {"question": "What is the capital of France?", "answer": "The capital of France is Paris.",
      "contexts": ["Paris is the capital of France."]}
OFF = {"question": "What is the capital of France?", "answer": "Bananas are rich in potassium.",
       "contexts": ["Paris is the capital of France."]}


def test_p_yes_is_the_yes_no_reading_of_the_next_tokens(qwen_judge):
    prompt = criterion_prompt("on_topic", "Does the answer reply to the question?",
                              {"question": ON["question"], "answer": ON["answer"]})
    top = qwen_judge.next_tokens(prompt, YES_NO)
    assert Judging(qwen_judge).p_yes(prompt) == p_yes(top.candidates, prompt.name)


def test_rubric_levels_are_a_distribution_over_the_digits(qwen_judge):
    levels = {1: "off topic", 2: "partly on topic", 3: "fully answers the question"}
    prompt = rubric_prompt("fit", "How well does the answer reply to the question?", levels,
                           {"question": ON["question"], "answer": ON["answer"]})
    got = Judging(qwen_judge).choice_probabilities(prompt, ["1", "2", "3"])
    assert set(got) == {"1", "2", "3"} and math.isclose(sum(got.values()), 1.0, abs_tol=1e-4)


def test_a_criterion_and_a_rubric_tell_on_topic_from_off_topic(qwen_judge, tmp_path):
    c = Criterion(name="on_topic_real", question="Does the answer reply to the question that was asked?")
    r = Rubric(name="fit_real", question="How well does the answer reply to the question?",
               levels={1: "not at all", 2: "partly", 3: "fully"})
    report = localragas.evaluate([ON, OFF], metrics=[c, r], judge=qwen_judge, cache_dir=tmp_path, progress=False)
    on, off = (s.metrics for s in report.samples)
    assert on["on_topic_real"].value > off["on_topic_real"].value
    assert on["fit_real"].value > off["fit_real"].value
