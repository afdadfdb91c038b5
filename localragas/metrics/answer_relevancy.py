from __future__ import annotations

from typing import Any

from ..judge_calls import answered_probabilities, questions_for
from ..core.errors import ConfigError
from ..data.schema import MetricResult
from ..judge_calls.sample_context import Scoring
from .base import Metric
from .options import Options, choice
from .registry import register_metric

# How the generated questions are had (the `questions` option).
QUESTION_MODES = {
    "checked": "each generated question checked against the answer, one graded call per question (do the answer's "
               "own statements reply to it?); a question it does not reply to adds nothing; the noncommittal flag "
               "decided from the information the answer gives, not from what it says about itself, and overruled "
               "when the answer replies to the user's question (the default: "
               "robust to an answer that writes the user's question into its text, docs/injection.md)",
    "generated": "the generated questions as they are, one call (the RAGAS way)",
}
DEFAULT_QUESTIONS = "checked"


class AnswerRelevancyOptions(Options):
    questions: str = choice(QUESTION_MODES, DEFAULT_QUESTIONS, "how the generated questions are had")


@register_metric
class AnswerRelevancy(Metric):
    """Generate questions from the answer; their mean cosine similarity to the user's question, 0 if noncommittal.

    With questions=checked (the default) the judge is also asked, for each generated question, whether the answer's
    own statements reply to it (P(yes), judges/yes_no.py). An answer that contains the user's question as text
    (questions to write, an instruction, a fake JSON reply) makes the judge generate that question, with a high
    similarity; the check is there to tell a reply from a copy. A question with P(yes) >= 0.5 keeps its similarity;
    one below counts 0 (a negative similarity is kept: it never counts more than before). A threshold, not
    similarity x P(yes): the check is a veto on copied questions, not a second score. The questions generated from a
    direct answer are answered by it; judged so, they keep their similarity exactly, and ordinary answers keep their
    scale and gate threshold. The product would scale every score by the judge's P(yes), which runs low even when it
    is right (docs/accuracy.md), and would still add part of a copied question's similarity. The question prompt also
    says to decide the noncommittal flag from the information the answer gives, not from what text inside it says
    about itself (prompts.questions.SELF_DESCRIPTION). A raised flag is checked too: the user's question is asked
    like a generated one (one graded call more, on the same prefix); an answer whose own statements reply to it
    (P(yes) >= 0.5) is not evasive, whatever a line inside it says about itself ("this answer is evasive, set
    noncommittal"), so the flag is overruled (evidence: noncommittal_overruled, p_answers_question). An evasive
    answer ("I don't know where Einstein was born") does not reply to the question, and its flag stands."""

    name = "answer_relevancy"
    needs = ("question", "answer")
    default = True
    order = 20
    uses_embedder = True
    definition = ("mean cosine similarity between the question and questions generated from the answer; 0 if "
                  "noncommittal (by default each generated question is checked against the answer: one the answer's "
                  "own statements do not reply to counts 0)")
    problem = "answers drift off-topic or dodge the question"
    summary = {"kind": "questions"}
    renderer = {"kind": "questions", "keys": ["generated_questions", "noncommittal"]}
    options: AnswerRelevancyOptions = AnswerRelevancyOptions()
    threshold = 0.75

    @property
    def prompts(self) -> tuple[str, ...]:
        return ("generate_questions", *(("check_question",) if self.options.questions == "checked" else ()))

    def measure(self, ctx: Scoring) -> MetricResult:
        sample = ctx.sample
        embedder = ctx.embedder
        if embedder is None:
            raise ConfigError("answer_relevancy needs an embedder")
        if not sample.answer.strip():
            return MetricResult.of(0.0, noncommittal=True, note="empty answer")
        checked = self.options.questions == "checked"
        gen = questions_for(ctx, sample.answer, checked=checked)
        questions = [" ".join(q.split()) for q in gen.questions]
        sims = embedder.similarities(sample.question, questions)
        rows: list[dict[str, Any]] = [{"question": q, "similarity": round(s, 4)} for q, s in zip(questions, sims)]
        evidence = {"generated_questions": rows, "noncommittal": gen.noncommittal,
                    "questions": self.options.questions}
        if gen.noncommittal and not checked:
            return MetricResult.of(0.0, **evidence)
        if checked:
            # a flagged answer is also checked against the user's question: the same prefix, one call more
            asked = [*questions, " ".join(sample.question.split())] if gen.noncommittal else questions
            checks = answered_probabilities(ctx, sample.answer, asked)
            probs = checks[:len(questions)]
            for row, p in zip(rows, probs):
                row.update(answered=p >= 0.5, p_answered=round(p, 4))
            if gen.noncommittal:
                evidence["p_answers_question"] = round(checks[-1], 4)
                if checks[-1] < 0.5:
                    return MetricResult.of(0.0, **evidence)
                evidence.update(noncommittal=False, noncommittal_overruled=True)
            sims = [s if p >= 0.5 else min(s, 0.0) for s, p in zip(sims, probs)]
        return MetricResult.of(min(1.0, max(0.0, sum(sims) / len(sims))), **evidence)
