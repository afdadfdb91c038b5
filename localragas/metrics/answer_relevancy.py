from __future__ import annotations

from ..budget import questions_for
from ..errors import ConfigError
from ..schema import MetricResult, Sample
from .base import Metric, register, with_warnings


class AnswerRelevancy(Metric):
    name = "answer_relevancy"
    needs = ("question", "answer")
    uses_embedder = True
    definition = "mean cosine similarity between the question and questions generated from the answer; 0 if noncommittal"
    problem = "answers drift off-topic or dodge the question"
    prompts = ("generate_questions",)

    def score(self, sample: Sample, judge, embedder=None) -> MetricResult:
        if embedder is None:
            raise ConfigError("answer_relevancy needs an embedder")
        if not sample.answer.strip():
            return MetricResult.of(0.0, noncommittal=True, note="empty answer")
        warnings: list[str] = []
        gen = questions_for(judge, sample.answer, warnings)
        questions = [" ".join(q.split()) for q in gen.questions]
        sims = embedder.similarities(sample.question, questions)
        evidence = {
            "generated_questions": [{"question": q, "similarity": round(s, 4)} for q, s in zip(questions, sims)],
            "noncommittal": gen.noncommittal,
        }
        if gen.noncommittal:
            return with_warnings(MetricResult.of(0.0, **evidence), warnings)
        return with_warnings(MetricResult.of(min(1.0, max(0.0, sum(sims) / len(sims))), **evidence), warnings)


register(AnswerRelevancy())
