"""The judge calls of a user's criterion and rubric (metrics/custom.py): the criterion's P(yes) with the judge's
calibration for its family applied (judge_calls.verdicts.graded), and a rubric's probability per level."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..prompts.custom import criterion_prompt, rubric_prompt
from .verdicts import ItemVerdicts, graded

if TYPE_CHECKING:
    from .sample_context import Scoring


def criterion_verdict(ctx: "Scoring", name: str, question: str, shown: dict[str, "str | list[str]"]) -> ItemVerdicts:
    """The judge's P(yes) to the criterion's question about the fields `shown`, raw and calibrated (family
    `criterion:NAME`)."""
    prompt = criterion_prompt(name, question, shown, lang=ctx.language.lang)
    return graded(ctx, prompt.name, [ctx.p_yes(prompt)])


def rubric_levels(ctx: "Scoring", name: str, question: str, levels: dict[int, str],
                  shown: dict[str, "str | list[str]"]) -> dict[int, float]:
    """The judge's probability of each level (its digit as the reply's first token), normalised over the levels."""
    prompt = rubric_prompt(name, question, levels, shown, lang=ctx.language.lang)
    got = ctx.choices(prompt, [str(k) for k in levels])
    return {k: got[str(k)] for k in levels}
