"""The in-process judge's step evaluation with the real test judge: a sample's contexts are evaluated once, P(yes)
does not depend on what ran before, and the greedy grammar loop replies as llama-cpp-python's own sampler does."""
from __future__ import annotations

import pytest

from localragas.core.reply_schemas import Claims, GeneratedQuestions
from localragas.judges import Judging
from localragas.prompts import extract_claims, generate_questions, verify_statement

CONTEXTS = ["Acme Cloud Storage offers three storage tiers: Standard, Infrequent Access and Archive. " * 3,
            "The Archive tier restores data within 12 hours. Standard is billed per GB and month."]
CLAIMS = ["Acme offers a Standard tier.", "Archive restores within 12 hours.", "Acme storage is free.",
          "Acme has three storage tiers."]


@pytest.fixture()
def fresh_smol():
    """A judge of its own (nothing saved from other tests), closed afterwards."""
    from localragas.judges import get_judge

    judges = []

    def make(**options):
        judges.append(get_judge("smollm2-135m", options or None))
        return judges[-1]

    yield make
    for j in judges:
        j.close()


def test_a_sample_with_four_claims_evaluates_its_contexts_once(fresh_smol):
    judge = fresh_smol()
    judging = Judging(judge)
    for claim in CLAIMS:
        judging.p_yes(verify_statement(claim, CONTEXTS))
    calls = judging.log.records
    steps = judge._prefix_steps().steps
    shared = sum(len(s) for s in steps.segments(verify_statement(CLAIMS[0], CONTEXTS))[:-1])
    assert shared > 150  # the system prompt and the contexts
    assert calls[0]["cached_tokens"] == 0
    assert all(c["cached_tokens"] == shared for c in calls[1:])
    evaluated = sum(c["prompt_tokens"] - c["cached_tokens"] for c in calls)
    assert evaluated == sum(c["prompt_tokens"] for c in calls) - 3 * shared


def test_p_yes_does_not_depend_on_the_order_or_on_a_restored_prefix(fresh_smol):
    forward, backward = fresh_smol(), fresh_smol()
    a = {c: Judging(forward).p_yes(verify_statement(c, CONTEXTS)) for c in CLAIMS}
    back = Judging(backward)
    for c in reversed(CLAIMS):  # other calls in between: the prefix is restored from a saved state
        back.generate(extract_claims("Acme offers three tiers.", "Which tiers?"), Claims)
        assert back.p_yes(verify_statement(c, CONTEXTS)) == a[c]
    whole = fresh_smol()
    for c in CLAIMS:  # the prompt evaluated whole, from an empty context, as llama-cpp-python's chat handler does
        whole._whole(verify_statement(c, CONTEXTS))
        from localragas.judges.yes_no import p_yes, top_from_logits

        llm = whole.llm
        top = top_from_logits(whole._prefix_steps().steps.last_logits(),
                              lambda i: llm.detokenize([i]).decode("utf-8", "replace"))
        assert p_yes(top, "x") == a[c]


@pytest.mark.parametrize("prompt, output", [
    (generate_questions("Acme offers Standard, Infrequent Access and Archive. Archive restores in 12 hours."),
     GeneratedQuestions),
    (extract_claims("Acme offers Standard and Archive. Archive restores in 12 hours.", "Which tiers?"), Claims),
])
def test_the_greedy_grammar_loop_replies_as_llama_cpp_python_does(fresh_smol, prompt, output):
    ours = fresh_smol()
    asked = Judging(ours)
    reply = asked.generate(prompt, output)
    theirs = fresh_smol()
    llm = theirs.llm
    r = llm.create_chat_completion(messages=prompt.messages(), grammar=theirs._grammar(output), temperature=0.0,
                                   seed=42, max_tokens=4096)
    assert reply == output.model_validate_json(r["choices"][0]["message"]["content"])
    assert asked.log.records[-1]["completion_tokens"] == r["usage"]["completion_tokens"]
