from __future__ import annotations

from pydantic import model_validator

from ..judge_calls.chunks import CHUNK_QUESTIONS, relevance_family
from ..judge_calls.verdicts import ANSWERABLE_FAMILY, RELEVANCE_FAMILY
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import VerdictOptions, WithVerdicts
from .options import choice
from .registry import register_metric


def average_precision(relevant: list[bool] | list[float]) -> float:
    """Mean of precision@k over the ranks k that hold a relevant chunk; 0 when none is relevant.

    With graded relevance (probabilities), each rank counts with its weight and precision@k is the expected share
    of relevant chunks in the top k; flags 0/1 give the usual average precision, and one chunk gives its own
    probability."""
    weights = [float(r) for r in relevant]
    hits, total = 0.0, 0.0
    for k, w in enumerate(weights, 1):
        hits += w
        total += w * hits / k
    mass = sum(weights)
    return total / mass if mass > 0 else 0.0


class ContextPrecisionOptions(VerdictOptions):
    """The verdicts, and the questions each chunk is asked (judge_calls/chunks.py CHUNK_QUESTIONS)."""

    questions: str = choice(CHUNK_QUESTIONS, description="the questions each chunk is asked")

    @model_validator(mode="after")
    def _graded_questions(self) -> "ContextPrecisionOptions":
        if self.questions != "useful" and self.verdicts == "json":
            raise ValueError(f"questions={self.questions} averages graded verdicts and does not apply to verdicts=json "
                             "(one JSON call for all chunks); use verdicts=probability")
        return self


@register_metric
class ContextPrecision(WithVerdicts):
    name = "context_precision"
    needs = ("question", "contexts")
    default = True
    order = 30
    definition = ("average precision of the ranked contexts: are the useful chunks ranked first? (chunks judged "
                  "against the reference, else the answer, else the question alone; by default each rank weighted "
                  "by the judge's P(yes))")
    problem = "retrieval returns noise: irrelevant chunks, or relevant ones ranked low"
    verdict_prompts = (RELEVANCE_FAMILY, "judge_chunks")
    item_fields = ("chunks", "rank", "relevant")
    summary = {"kind": "chunks"}
    renderer = {"kind": "chunks", "keys": ["chunks", "fraction_relevant", "judged_against"]}
    thresholds = {"probability": 0.50, "calibrated": 0.65, "json": 0.65}
    options: ContextPrecisionOptions = ContextPrecisionOptions()

    @property
    def graded_family(self) -> str:
        """The family a calibration map knows its chunk scores by (questions=both: the two questions' mean)."""
        return relevance_family(self.options.questions)

    @property
    def graded_prompts(self) -> tuple[str, ...]:
        """The chunk questions asked: their text decides a chunk's P(yes)."""
        return (RELEVANCE_FAMILY, ANSWERABLE_FAMILY) if self.options.questions == "both" else (RELEVANCE_FAMILY,)

    @property
    def prompts(self) -> tuple[str, ...]:
        return self.graded_prompts if self.graded else super().prompts

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        if not sample.contexts:
            return MetricResult.unscored_because("no_contexts")
        if sample.reference:
            target, kind = sample.reference, "reference answer"
        elif sample.answer.strip():
            target, kind = sample.answer, "answer"
        else:  # a retrieval-only sample: does each chunk answer the question?
            target, kind = "", "question"
        verdicts = self.verdicts
        notes: list[dict] = [{} for _ in sample.contexts]
        got = verdicts.relevance(ctx, sample.question, target, kind, sample.contexts, self.options.questions, notes)
        weights = got.values  # graded: the calibrated P(yes), or raw without a calibration
        chunks = [{"rank": k, **got.item(k - 1, "relevant"), **notes[k - 1]} for k in range(1, len(weights) + 1)]
        return MetricResult.of(
            average_precision(weights),
            judged_against=kind.split()[0],
            verdicts=verdicts.name,
            **({"calibrated": got.calibrated} if verdicts.graded else {}),
            chunks=chunks,
            fraction_relevant=sum(weights) / len(weights),
        )
