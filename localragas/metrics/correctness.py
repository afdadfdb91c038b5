"""Factual correctness (claim-level precision, recall and F-beta between the answer and the reference) and answer
correctness (that F-beta weighted with the semantic similarity of the two texts), as in ragas.

TP: answer claims the reference supports; FP: answer claims it does not; FN: reference claims the answer does not
support. Precision TP/(TP+FP), recall TP/(TP+FN) (ragas's definitions: TP counts answer claims, FN reference claims).
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from ..core.errors import ConfigError
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .options import Options
from .registry import register_metric
from .semantic_similarity import similarity
from .shared import answer_claims, answer_claims_in_reference, reference_claims, reference_claims_in_answer

def f_beta(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """F-beta of claim counts; 0 when nothing is right (tp == 0)."""
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def _beta(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"beta must be a number > 0 (> 1 favours recall, < 1 precision), got {value!r}")
    return float(value)


Beta = Annotated[float, BeforeValidator(_beta), Field(description="the F-beta's beta: > 1 favours recall, < 1 "
                                                                  "precision")]


class FactualCorrectnessOptions(Options):
    beta: Beta = 1.0


class AnswerCorrectnessOptions(Options):
    weights: tuple[float, float] = Field(default=(0.75, 0.25), description="the weights of claim F-beta and semantic "
                                                                   "similarity")
    beta: Beta = 1.0

    @field_validator("weights", mode="before")
    @classmethod
    def _weights(cls, given: Any) -> tuple[float, ...]:
        """Two numbers >= 0, not both 0; also as text, "0.5,0.5" or "0.5/0.5"."""
        weights = given
        if isinstance(weights, str):
            weights = [w for w in weights.replace("/", ",").split(",") if w.strip()]
        try:
            weights = tuple(float(w) for w in weights)
        except (TypeError, ValueError):
            weights = ()
        if len(weights) != 2 or any(w < 0 for w in weights) or not any(weights):
            raise ValueError(f"weights must be two numbers >= 0, not both 0 (factuality, similarity), e.g. "
                             f"0.75,0.25; got {given!r}")
        return weights


def claim_check(ctx: Scoring, both_ways: bool = True) -> MetricResult | dict[str, Any]:
    """The claims of both texts checked against each other: a dict of evidence with tp/fp/fn, or the unscored result.

    both_ways=False (precision only) leaves the reference's claims out, as ragas does.
    """
    if not ctx.sample.reference:
        return MetricResult.unscored_because("no_reference")
    claims = answer_claims(ctx)
    if not claims:
        return MetricResult.unscored_because("no_claims", note="the answer holds no factual claim")
    flags = answer_claims_in_reference(ctx)
    ev: dict[str, Any] = {"answer_claims": [{"claim": c, "in_reference": f} for c, f in zip(claims, flags)]}
    tp, fp, fn = sum(flags), len(flags) - sum(flags), 0
    if both_ways:
        ref = reference_claims(ctx)
        if not ref:
            return MetricResult.unscored_because("no_reference_claims", note="the reference holds no factual claim")
        covered = reference_claims_in_answer(ctx)
        ev["reference_claims"] = [{"claim": c, "in_answer": f} for c, f in zip(ref, covered)]
        fn = len(covered) - sum(covered)
        ev["reference_coverage"] = sum(covered) / len(covered)  # share of reference claims the answer states
    ev.update(tp=tp, fp=fp, fn=fn)
    return ev


class FactualCorrectness(Metric):
    """The three modes' computation; a subclass per mode (below) is the metric."""

    needs = ("answer", "reference")
    prompts = ("extract_claims", "verify_statements")
    options: Options = FactualCorrectnessOptions()
    problem = "answers state wrong facts or miss facts of the reference answers"
    summary = {"kind": "claim_counts"}
    mode: str  # f1, precision, recall

    def measure(self, ctx: Scoring) -> MetricResult:
        got = claim_check(ctx, both_ways=self.mode != "precision")
        if isinstance(got, MetricResult):
            return got
        tp, fp, fn = got["tp"], got["fp"], got["fn"]
        precision = tp / (tp + fp)
        out: dict[str, Any] = {"mode": self.mode, "precision": precision}
        if self.mode != "precision":
            assert isinstance(self.options, FactualCorrectnessOptions)
            beta = self.options.beta
            out.update(recall=tp / (tp + fn) if tp + fn else 0.0, f_beta=f_beta(tp, fp, fn, beta), beta=beta)
        value = {"precision": precision, "recall": out.get("recall"), "f1": out.get("f_beta")}[self.mode]
        return MetricResult.of(value, **out, **got)


@register_metric
class FactualCorrectnessF1(FactualCorrectness):
    name = "factual_correctness"
    order = 80
    mode = "f1"
    ragas_name = "factual_correctness(mode=f1)"
    definition = "F-beta (beta 1) of claim precision and recall between the answer and the reference"


@register_metric
class FactualCorrectnessPrecision(FactualCorrectness):
    name = "factual_correctness_precision"
    order = 90
    mode = "precision"
    ragas_name = "factual_correctness(mode=precision)"
    options = Options()  # no F-beta
    definition = "share of the answer's claims that the reference supports"


@register_metric
class FactualCorrectnessRecall(FactualCorrectness):
    name = "factual_correctness_recall"
    order = 100
    mode = "recall"
    ragas_name = "factual_correctness(mode=recall)"
    definition = "answer claims the reference supports / (those + reference claims the answer misses)"


@register_metric
class AnswerCorrectness(Metric):
    name = "answer_correctness"
    needs = ("question", "answer", "reference")
    order = 110
    uses_embedder = True
    prompts = ("extract_claims", "verify_statements")
    options: AnswerCorrectnessOptions = AnswerCorrectnessOptions()
    definition = "weighted mean of the claim F-beta (answer vs reference) and their semantic similarity (0.75/0.25)"
    problem = "answers are wrong or incomplete compared with the reference answers"
    summary = {"kind": "claim_counts"}

    def with_options(self, **options: Any) -> "Metric":
        configured = super().with_options(**options)
        assert isinstance(configured.options, AnswerCorrectnessOptions)
        configured.uses_embedder = configured.options.weights[1] > 0  # no embedder for a similarity weight of 0
        return configured

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        embedder = ctx.embedder
        w_fact, w_sim = self.options.weights
        if w_sim > 0 and embedder is None:
            raise ConfigError("answer_correctness needs an embedder (or weights with a similarity weight of 0)")
        got = claim_check(ctx)
        if isinstance(got, MetricResult):
            return got
        factuality = f_beta(got["tp"], got["fp"], got["fn"], self.options.beta)
        sim = similarity(embedder, sample.answer, sample.reference or "") if w_sim > 0 else None
        value = (w_fact * factuality + w_sim * (sim or 0.0)) / (w_fact + w_sim)
        return MetricResult.of(
            min(1.0, max(0.0, value)), factuality=factuality, similarity=sim, weights=list(self.options.weights),
            beta=self.options.beta, **got)
