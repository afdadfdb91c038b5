"""Noise sensitivity (ragas NoiseSensitivity): how often the answer states something wrong that a retrieved context
supports. Lower is better.

A context is *relevant* when it supports at least one of the reference's claims. An answer claim is *incorrect*
when the reference does not support it. Relevant mode: the share of the answer's claims that are incorrect and
supported by a relevant context (the answer repeats a wrong detail of a relevant chunk). Irrelevant mode: the share
that are incorrect and supported by an irrelevant context but by no relevant one (the answer picks up noise).
Both modes share the same judge calls (one pass per sample).
"""
from __future__ import annotations

from ..data.metric_definition import item_summary
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .registry import register_metric
from .shared import answer_claims, answer_claims_in_reference, claims_in_context, reference_claims

LOWER = "lower is better"


def _summary(where: str) -> dict:
    return item_summary("claims", "claim", "counted", f"no incorrect claim supported by {where} context",
                        f"incorrect claims supported by {where} context {{bad}}/{{total}}", bad_when=True)


class NoiseSensitivity(Metric):
    """Both modes' computation; a subclass per mode (below) is the metric."""

    needs = ("question", "answer", "reference", "contexts")
    higher_is_better = False
    prompts = ("extract_claims", "verify_statements")
    mode: str  # relevant, irrelevant

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        if not sample.reference:
            return MetricResult.unscored_because("no_reference")
        if not sample.contexts:
            return MetricResult.unscored_because("no_contexts")
        claims = answer_claims(ctx)
        if not claims:
            return MetricResult.unscored_because("no_claims", note="the answer holds no factual claim")
        ref = reference_claims(ctx)
        if not ref:
            return MetricResult.unscored_because(
                "no_reference_claims", note="the reference holds no factual claim: no context can be relevant")
        ranks = range(1, len(sample.contexts) + 1)
        relevant = [any(claims_in_context(ctx, "reference", k)) for k in ranks]
        in_context = [claims_in_context(ctx, "answer", k) for k in ranks]
        correct = answer_claims_in_reference(ctx)
        rows, counted = [], []
        for i, claim in enumerate(claims):
            by_relevant = any(in_context[k][i] for k in range(len(relevant)) if relevant[k])
            by_irrelevant = not by_relevant and any(in_context[k][i] for k in range(len(relevant)) if not relevant[k])
            hit = not correct[i] and (by_relevant if self.mode == "relevant" else by_irrelevant)
            counted.append(hit)
            rows.append({"claim": claim, "correct": correct[i], "supported_by_relevant": by_relevant,
                         "supported_by_irrelevant_only": by_irrelevant, "counted": hit})
        return MetricResult.fraction(
            counted, mode=self.mode, direction=LOWER, claims=rows,
            contexts=[{"rank": k, "relevant": r} for k, r in zip(ranks, relevant)])


@register_metric
class NoiseSensitivityRelevant(NoiseSensitivity):
    name = "noise_sensitivity_relevant"
    order = 60
    mode = "relevant"
    ragas_name = "noise_sensitivity(mode=relevant)"
    summary = _summary("a relevant")
    definition = ("share of the answer's claims that are incorrect (not in the reference) yet supported by a relevant "
                  "retrieved context; lower is better")
    problem = "answers repeat wrong details found in relevant retrieved chunks"


@register_metric
class NoiseSensitivityIrrelevant(NoiseSensitivity):
    name = "noise_sensitivity_irrelevant"
    order = 70
    mode = "irrelevant"
    ragas_name = "noise_sensitivity(mode=irrelevant)"
    summary = _summary("only an irrelevant")
    definition = ("share of the answer's claims that are incorrect (not in the reference) and supported only by "
                  "irrelevant retrieved contexts; lower is better")
    problem = "answers pick up wrong claims from irrelevant retrieved chunks (retrieval noise)"
