"""Prompts fitted into the judge's context window (localragas.judge_calls), with the fake judge given a small n_ctx:
split or truncated with a warning in the evidence, never a crash, never a claim or chunk silently dropped."""
from __future__ import annotations

import re

import pytest

from localragas.judge_calls import window
from localragas.judge_calls.text import split_text, truncate
from localragas.judge_calls.window import OVERHEAD, Window, check_window, needed_window
from localragas.judges.embeddings import HashingEmbedder
from localragas.core.errors import ConfigError
from localragas.judges import FakeJudge, Judge
from localragas.judges.fake import _between, heuristic_reply
from localragas.metrics import all_metrics
from localragas.core.reply_schemas import Claims, GeneratedQuestions, YesNo
from localragas.prompts import FAMILIES as prompt_families, extract_claims
from localragas.run.runner import evaluate
from localragas.data.schema import Sample
from localragas.judge_calls.sample_context import Scoring

from metrics_helpers import Texts

# The batched RAGAS-style verdicts (verdicts=json); graded verdicts in a small window: test_graded_verdicts.py and
# the *_graded tests below. Faithfulness in CORE judges the judge's claims (statements=claims), whose extraction is
# fitted into the window here; GRADED is the defaults (faithfulness: the answer's sentences).
JSON = {"verdicts": "json"}
CLAIMS = {"statements": "claims"}
CORE = [all_metrics()[n].with_options(**JSON, **(CLAIMS if n == "faithfulness" else {}))
        if "verdicts" in dict(all_metrics()[n].options) else all_metrics()[n]
        for n in ("faithfulness", "answer_relevancy", "context_precision", "context_recall")]
FAITH, RELEVANCY, PRECISION, RECALL = CORE
GRADED = [all_metrics()[n] for n in ("faithfulness", "answer_relevancy", "context_precision", "context_recall")]
N_CTX = 1024
FACTS = [f"Station {i} measured {i * 3} millimetres of rain in March." for i in range(120)]
LONG_CONTEXT = " ".join(FACTS)  # ~6,500 characters: several times what a 1024-token window holds with instructions


def reply_tokens(output: type) -> int:
    if output is Claims:
        return 0  # checked separately: depends on the text
    if output is GeneratedQuestions:
        return window.QUESTIONS_REPLY
    if output is YesNo:
        return window.YES_NO_REPLY
    n = output.model_json_schema()["properties"]["verdicts"]["maxItems"]
    return window.verdicts_reply(n)


def assert_every_call_fits(judge: FakeJudge) -> None:
    w = Window(judge)
    for call in judge.calls:
        used = w.prompt_tokens(call.prompt) + reply_tokens(call.output)
        assert used <= judge.n_ctx, (call.prompt.name, used)


# --- splitting ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    LONG_CONTEXT,
    "no sentence end " * 500,
    "x" * 5000,  # no space at all
    "晴天时天空是蓝色的。" * 400,  # CJK: sentence ends without spaces
    "line one\n\n\nline two\n" * 300,
    "🌤️💙" * 1000,
])
@pytest.mark.parametrize("limit", [1, 7, 100, 1000])
def test_split_text_keeps_every_character_and_respects_the_limit(text, limit):
    pieces = split_text(text, limit)
    assert "".join(pieces) == text
    assert all(len(p) <= limit for p in pieces)
    assert all(pieces)


def test_split_text_cuts_at_sentence_ends_when_it_can():
    pieces = split_text(LONG_CONTEXT, 200)
    assert all(p.rstrip().endswith(".") for p in pieces)


def test_split_text_does_not_cut_after_an_abbreviation_or_an_initial():
    text = ("Mr. Mole met Joe R. Lansdale in the U.S. Army camp. " * 3) + "No. 10 is the house. " * 3
    pieces = split_text(text, 60)
    assert "".join(pieces) == text
    assert not any(p.rstrip().endswith(("Mr.", " R.", "U.S.", "No.")) for p in pieces), pieces
    assert all(p.rstrip().endswith(".") for p in pieces)


def test_split_text_by_tokens_and_truncate():
    judge = FakeJudge()
    pieces = split_text(LONG_CONTEXT, 100, judge.count_tokens)
    assert "".join(pieces) == LONG_CONTEXT and all(judge.count_tokens(p) <= 100 for p in pieces)
    head = truncate(LONG_CONTEXT, 50, judge.count_tokens)
    assert head.endswith(" […]") and LONG_CONTEXT.startswith(head[:-4].rstrip()) and judge.count_tokens(head) <= 50
    assert truncate("short", 50, judge.count_tokens) == "short"


class NoTokenizer(FakeJudge):
    def count_tokens(self, text):
        raise AssertionError("a prompt whose UTF-8 size fits needs no tokenizer (a cached run loads no model)")


def test_prompts_that_fit_by_size_never_ask_the_tokenizer():
    judge = NoTokenizer()
    s = Sample(id="s", question="Q?", contexts=["Rain fell."] * 3, answer="Rain fell. It was cold.", reference="Rain.")
    for m in CORE + GRADED:
        m.score(Scoring(s, judge, HashingEmbedder()))
    check_window(judge, ["extract_claims", "verify_statements", "judge_chunks", "generate_questions",
                         "verify_statement", "judge_chunk"])


# --- each metric in a small window ---------------------------------------------------------------------------------


sample = Texts("How much rain did station 7 measure in March?", [LONG_CONTEXT],
               "Station 7 measured 21 millimetres of rain in March. The capital of Peru is Lima.",
               "Station 7 measured 21 millimetres of rain in March.")


def test_faithfulness_with_contexts_longer_than_the_window():
    judge = FakeJudge(n_ctx=N_CTX)
    r = FAITH.score(Scoring(sample(), judge, None))
    assert_every_call_fits(judge)
    verify = judge.asked("verify_statements")
    assert len(verify) > 1
    # every piece of the context was shown to the judge, in order, nothing dropped
    shown = [c for p in verify for c in _between(p.user, "context")]
    assert " ".join(dict.fromkeys(shown)).split() == LONG_CONTEXT.split()
    assert [c["supported"] for c in r.evidence["claims"]] == [True, False]  # the second claim is not in any piece
    assert r.value == 0.5
    (warning,) = r.evidence["warnings"]
    assert warning.startswith("the contexts and statements did not fit the judge's context window (n_ctx=1024) in "
                              "one call: 2 statements were judged against ")
    assert warning.endswith("a statement counts as supported when any group supports it; context(s) 1 were split into "
                            "pieces")


def test_a_statement_supported_by_one_group_is_not_asked_again():
    judge = FakeJudge(n_ctx=N_CTX)
    FAITH.score(Scoring(sample(answer="Station 0 measured 0 millimetres of rain in March."), judge, None))
    verify = judge.asked("verify_statements")
    assert len(verify) == 1  # supported by the first group of context pieces: the other groups are not asked


def verbatim(prompt, output):
    """The heuristic fake judge, except that a statement is supported only when a context holds it word for word."""
    if prompt.name != "verify_statements":
        return heuristic_reply(prompt, output)
    joined = " ".join(_between(prompt.user, "context"))
    return {"verdicts": [{"id": i, "verdict": "yes" if s in joined else "no"}
                         for i, s in enumerate(_between(prompt.user, "statement"), 1)]}


def test_every_claim_of_a_long_answer_is_judged():
    answer = " ".join(FACTS[:60])
    judge = FakeJudge(responder=verbatim, n_ctx=N_CTX)
    s = sample(answer=answer, contexts=["Station 3 measured 9 millimetres of rain in March."])
    r = FAITH.score(Scoring(s, judge, None))
    assert_every_call_fits(judge)
    claims = [c["claim"] for c in r.evidence["claims"]]
    assert claims == FACTS[:60]  # 60 claims (beyond one reply's 16), all judged, none dropped
    judged = [s for p in judge.asked("verify_statements") for s in _between(p.user, "statement")]
    assert sorted(set(judged)) == sorted(claims)
    assert r.value == pytest.approx(1 / 60)
    assert any(re.fullmatch(r"the answer \(\d+ characters\) was split into \d+ pieces for claim extraction \(the "
                            r"judge's context window, n_ctx=1024\); claims were extracted from every piece", w)
               for w in r.evidence["warnings"])


def test_context_recall_with_a_long_reference_and_long_contexts():
    judge = FakeJudge(n_ctx=N_CTX)
    r = RECALL.score(Scoring(sample(reference=" ".join(FACTS[:40])), judge, None))
    assert_every_call_fits(judge)
    assert len(r.evidence["statements"]) == 40 and r.value == 1.0
    assert any(w.startswith("the reference (") for w in r.evidence["warnings"])


def test_context_precision_groups_chunks_and_a_split_chunk_is_relevant_when_any_piece_is():
    contexts = ["Unrelated text about bananas and their colour."] * 30 + [LONG_CONTEXT]

    def respond(prompt, output):
        shown = _between(prompt.user, "context")
        return {"verdicts": [{"id": i, "verdict": "yes" if "Station 77 " in c else "no"}
                             for i, c in enumerate(shown, 1)]}

    judge = FakeJudge(responder=respond, n_ctx=N_CTX)
    r = PRECISION.score(Scoring(sample(contexts=contexts), judge, None))
    assert_every_call_fits(judge)
    assert [c["relevant"] for c in r.evidence["chunks"]] == [False] * 30 + [True]
    assert r.value == pytest.approx(1 / 31)
    shown = [c for p in judge.asked("judge_chunks") for c in _between(p.user, "context")]
    assert len(shown) > len(contexts)  # every chunk shown, the long one in pieces
    (warning,) = r.evidence["warnings"]
    assert re.fullmatch(r"the 31 chunks did not fit the judge's context window \(n_ctx=1024\) in one call: judged in "
                        r"\d+ groups; chunk\(s\) 31 were split into pieces \(relevant when any piece is\)", warning)


def test_context_precision_truncates_a_reference_too_long_for_the_window():
    judge = FakeJudge(n_ctx=N_CTX)
    r = PRECISION.score(Scoring(sample(reference=LONG_CONTEXT, contexts=["c1 Station", "c2"]), judge, None))
    assert_every_call_fits(judge)
    assert r.scored and len(r.evidence["chunks"]) == 2
    assert "the reference answer was truncated to fit the judge's context window (n_ctx=1024) for judging chunk " \
           "relevance" in r.evidence["warnings"]


def test_answer_relevancy_truncates_an_answer_too_long_for_the_window():
    judge = FakeJudge(n_ctx=N_CTX)
    r = RELEVANCY.score(Scoring(sample(answer=LONG_CONTEXT), judge, HashingEmbedder()))
    assert_every_call_fits(judge)
    (prompt,) = judge.asked("generate_questions")
    shown = _between(prompt.user, "answer")[0]
    assert shown.endswith(" […]") and LONG_CONTEXT.startswith(shown[:-4].rstrip())
    warning, check = r.evidence["warnings"]
    assert re.fullmatch(r"the answer \(\d+ tokens\) was truncated to its first \d+ tokens to fit the judge's context "
                        r"window \(n_ctx=1024\) for generating questions", warning)
    assert re.fullmatch(r"the answer \(\d+ tokens\) was truncated to its first \d+ tokens to fit the judge's context "
                        r"window \(n_ctx=1024\) for checking the generated questions", check)
    (asked,) = judge.asked("check_question")  # the fake's question (written 3 times), against the answer's beginning
    assert _between(asked.user, "answer")[0].endswith(" […]")


def test_a_huge_question_is_truncated_for_claim_extraction():
    judge = FakeJudge(n_ctx=N_CTX)
    s = sample(question=LONG_CONTEXT + "?", contexts=["Station 7 measured 21 millimetres."])
    r = FAITH.score(Scoring(s, judge, None))
    assert_every_call_fits(judge)
    assert "the question was truncated to fit the judge's context window (n_ctx=1024) for extracting the answer's " \
           "claims" in r.evidence["warnings"]


def test_inputs_that_fit_give_no_warning_and_one_call_each():
    judge = FakeJudge()
    s = Sample(id="s", question="Q?", contexts=["Rain fell in March."], answer="Rain fell in March.",
               reference="Rain fell in March.")
    for m in CORE:
        r = m.score(Scoring(s, judge, HashingEmbedder()))
        assert "warnings" not in r.evidence, m.name
    assert [c.prompt.name for c in judge.calls] == ["extract_claims", "verify_statements", "generate_questions",
                                                     "check_question", "judge_chunks", "extract_claims",
                                                     "verify_statements"]
    graded = FakeJudge()
    for m in GRADED:  # the defaults: one graded call per sentence, claim or chunk, here one each
        assert "warnings" not in m.score(Scoring(s, graded, HashingEmbedder())).evidence, m.name
    assert [c.prompt.name for c in graded.calls] == ["verify_statement", "generate_questions",
                                                     "check_question", "judge_chunk", "extract_claims",
                                                     "verify_statement"]


def test_sixteen_claims_in_one_reply_is_flagged_as_possibly_incomplete():
    judge = FakeJudge([{"claims": [f"Claim {i}." for i in range(16)]}, {"verdicts": [
        {"id": i, "verdict": "yes"} for i in range(1, 17)]}])
    r = FAITH.score(Scoring(sample(contexts=["c"]), judge, None))
    assert r.evidence["warnings"] == [
        "the judge returned the maximum of 16 claims for the answer: claims beyond that may be missing"]


def test_the_llamacpp_judge_counts_with_its_tokenizer_without_a_real_model():
    pytest.importorskip("llama_cpp")
    from localragas.judges.llamacpp import LlamaCppJudge

    class Tok:
        def tokenize(self, data, add_bos, special):
            assert isinstance(data, bytes) and add_bos is False and special is True
            return list(data)  # one token per byte

    judge = LlamaCppJudge.__new__(LlamaCppJudge)
    judge._llm = Tok()
    assert judge.count_tokens("abc é") == 6


# --- refusing an impossible window ---------------------------------------------------------------------------------


def test_a_window_too_small_for_instructions_and_one_item_is_refused_at_start():
    judge = FakeJudge(n_ctx=300)
    with pytest.raises(ConfigError) as e:
        evaluate([sample()], metrics=["faithfulness"], judge=judge)
    needed = needed_window(judge, "verify_statement")  # faithfulness's default asks no extraction
    assert needed > 300
    assert str(e.value) == (
        f"the judge's context window is too small: n_ctx=300 tokens, but the verify_statement prompt needs at least "
        f"{needed} (its instructions, one item and the reply); raise it, e.g. --judge-option n_ctx=2048")
    assert judge.calls == []  # refused before any judging


@pytest.mark.parametrize("metric, prompt, options", [("faithfulness", "extract_claims", CLAIMS),
                                                     ("context_precision", "judge_chunks", JSON),
                                                     ("context_precision", "judge_chunk", None),
                                                     ("answer_relevancy", "generate_questions", None)])
def test_the_window_is_checked_for_the_chosen_metrics_only(metric, prompt, options):
    needed = needed_window(FakeJudge(), prompt)
    judge = FakeJudge(n_ctx=needed)
    kw = dict(metrics=[metric], embedder=HashingEmbedder(), metric_options={metric: options} if options else None)
    evaluate([sample()], judge=judge, **kw)  # just enough: runs
    with pytest.raises(ConfigError, match=f"n_ctx={needed - 1} tokens, but the {prompt} prompt needs at least {needed}"):
        evaluate([sample()], judge=FakeJudge(n_ctx=needed - 1), **kw)


def test_smallest_windows_are_modest():
    judge = FakeJudge()
    sizes = {n: needed_window(judge, n) for n, f in prompt_families.items() if f.smallest}
    assert all(size < 1024 for size in sizes.values()), sizes
    assert Window(judge).prompt_tokens(extract_claims("", None)) > OVERHEAD


def test_a_judge_without_a_window_never_splits():
    judge = FakeJudge(n_ctx=None)
    r = FAITH.score(Scoring(sample(), judge, None))
    assert len(judge.asked("verify_statements")) == 1 and "warnings" not in r.evidence
    check_window(judge, ["extract_claims"])  # nothing to check


@pytest.mark.parametrize("options", [None, {m: JSON for m in ("faithfulness", "context_precision", "context_recall")}],
                         ids=["graded", "json"])
def test_a_run_with_long_inputs_completes_with_warnings_in_the_report(options):
    samples = [sample(id="long"), sample(id="short", contexts=["Station 7 measured 21 millimetres of rain in March."])]
    judge = FakeJudge(n_ctx=N_CTX)
    report = evaluate(samples, judge=judge, embedder=HashingEmbedder(), metric_options=options)
    assert_every_call_fits(judge)
    assert [s.id for s in report.samples] == ["long", "short"]
    long, short = report.samples
    assert all(r.scored for r in long.metrics.values())
    assert "warnings" in long.metrics["faithfulness"].evidence
    assert not any("warnings" in r.evidence for r in short.metrics.values())


class BrokenCounter(Judge):
    n_ctx = 2048

    def count_tokens(self, text):
        return len(text.encode("utf-8"))  # the worst case: a token per byte

    def complete(self, prompt, schema, output):
        raise AssertionError("not called")


def test_the_upper_bound_and_the_count_agree_for_a_byte_per_token_tokenizer():
    w = Window(BrokenCounter())
    p = extract_claims("word " * 300, None)
    assert w.fits(p, 0) == (w.prompt_tokens(p) <= 2048)


def test_fitted_asks_as_is_when_every_prompt_fits_else_splits_and_notes_it():
    """window.fitted, the one rule every call is fitted by: the whole when the prompts fit with their replies, else
    the split's result, its note in the evidence's warnings."""
    prompt = extract_claims("The tram opened in 1875. " * 40, None)
    for n_ctx, expected, warned in ((8192, "whole", []), (300, "split", ["split it (the judge's context window "
                                                                         "(n_ctx=300))"])):
        ctx = Scoring(sample(), FakeJudge(n_ctx=n_ctx), None)
        ctx.warnings = []
        got = window.fitted(ctx, [(prompt, 16)], lambda: "whole", lambda w: ("split", f"split it ({w.named})"))
        assert (got, ctx.warnings) == (expected, warned)
