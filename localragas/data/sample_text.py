"""A sample's text as its report keeps it (SampleResult.input): the question, answer, contexts and reference as scored,
so a reader of report.json, the HTML drawer, the CSV and to_pandas() sees what was judged.

Bounded, so one huge row cannot swell a report: each text at most MAX_TEXT_CHARS characters and at most MAX_CONTEXTS
contexts; a cut is marked in the text itself ("… [cut: N more characters]", the last context kept ending with
"… [cut: N more contexts]") and by SampleResult.input_truncated. A run that must not copy its data into its reports
keeps none (`--no-sample-text`, `sample_text = false`, evaluate(sample_text=False): report.meta.sample_text false).
"""
from __future__ import annotations

from .schema import Sample, SampleInput, SampleResult

MAX_TEXT_CHARS = 20_000  # characters of one text kept (the question, the answer, the reference, each context)
MAX_CONTEXTS = 50  # contexts kept


def _cut(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_TEXT_CHARS:
        return text, False
    return f"{text[:MAX_TEXT_CHARS]}… [cut: {len(text) - MAX_TEXT_CHARS:,} more characters]", True


def sample_input(sample: Sample) -> tuple[SampleInput, bool]:
    """The sample's text, bounded, and whether a bound cut any of it."""
    question, q_cut = _cut(sample.question)
    answer, a_cut = _cut(sample.answer) if sample.answer is not None else (None, False)
    reference, r_cut = _cut(sample.reference) if sample.reference is not None else (None, False)
    kept = [_cut(c) for c in sample.contexts[:MAX_CONTEXTS]]
    contexts = [text for text, _ in kept]
    dropped = len(sample.contexts) - len(contexts)
    if dropped > 0:
        contexts[-1] += f"\n… [cut: {dropped:,} more contexts]"
    cut = q_cut or a_cut or r_cut or dropped > 0 or any(c for _, c in kept)
    return SampleInput(question=question, answer=answer, contexts=contexts, reference=reference), cut


def with_text(result: SampleResult, sample: Sample | None) -> SampleResult:
    """The result with the sample's text (bounded), or with none when `sample` is None: what a run keeps, whether the
    result was scored now or taken from a resume checkpoint written with the other choice."""
    if sample is None:
        turn = result.turn and result.turn.model_copy(update={"user_message": None, "question": None})
        if result.input is None and not result.input_truncated and turn == result.turn:
            return result
        return result.model_copy(update={"input": None, "input_truncated": False, "turn": turn})
    text, cut = sample_input(sample)
    return result.model_copy(update={"input": text, "input_truncated": cut})
