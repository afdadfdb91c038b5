"""Graded verdicts and rubrics from token probabilities: what a backend's next-token candidates (judges/base.py
NextTokens) mean, read by the judging layer (judges/judging.py Judging.p_yes, Judging.choice_probabilities).

P("yes") against P("no") for the first word of the judge's reply: the spellings of one word ("yes", "Yes", " yes",
'"yes') are pooled. Asked one statement at a time, a small judge's sampled yes/no says "yes" to nearly anything on
topic; the probability keeps the doubt it had (docs/accuracy.md). A rubric's levels are read the same way.

The judge cache keeps the number read (`stored` / `p_yes_of_stored`, `choices_of_stored`); caches written before
kept the YesNo / Choices JSON (core/reply_schemas.py) under the same keys, and are read too."""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Sequence

from pydantic import ValidationError

from ..core.errors import JudgeError
from ..core.reply_schemas import Choices, YesNo

TOP_TOKENS = 20  # candidates asked of each backend (the OpenAI API's maximum for top_logprobs)
YES_NO = ("yes", "no")  # the words a graded verdict reads (Judge.next_tokens `words`)
DIGITS = 6  # P(yes) and a rubric's probabilities are rounded here, once: the number cached and scored
_STRIP = " \t\n\"'`*.:,!“”‘’「」"
WORDS = {"yes": "yes", "no": "no", "是": "yes", "否": "no"}


def word_of(token: str) -> str | None:
    """'yes' or 'no' when a token spells one of them (any case, spacing, quotes), else None."""
    return WORDS.get(token.strip(_STRIP).lower())


def p_yes(candidates: Iterable[tuple[str, float]], prompt_name: str) -> float:
    """P(yes) / (P(yes) + P(no)) of the top next-token candidates, rounded to DIGITS; JudgeError when neither word is
    among them."""
    pooled = {"yes": 0.0, "no": 0.0}
    seen: list[str] = []
    for token, logprob in candidates:
        seen.append(token)
        word = word_of(token)
        if word is not None and logprob > -math.inf:
            pooled[word] += math.exp(logprob)
    mass = pooled["yes"] + pooled["no"]
    if mass <= 0.0:
        raise JudgeError(f"{prompt_name}: neither 'yes' nor 'no' among the judge's top next tokens {seen[:8]!r}")
    return round(pooled["yes"] / mass, DIGITS)


def choice_probabilities(candidates: Iterable[tuple[str, float]], options: Sequence[str],
                         prompt_name: str) -> dict[str, float]:
    """Each option's pooled probability among the top next-token candidates (any spacing or quotes), normalised over
    the options and rounded to DIGITS; JudgeError when none of them is among the candidates."""
    pooled = dict.fromkeys(options, 0.0)
    seen: list[str] = []
    for token, logprob in candidates:
        seen.append(token)
        word = token.strip(_STRIP).lower()
        if word in pooled and logprob > -math.inf:
            pooled[word] += math.exp(logprob)
    mass = sum(pooled.values())
    if mass <= 0.0:
        raise JudgeError(f"{prompt_name}: none of {', '.join(options)} among the judge's top next tokens {seen[:8]!r}")
    return {k: round(v / mass, DIGITS) for k, v in pooled.items()}


def top_from_logits(logits, decode, k: int = TOP_TOKENS) -> list[tuple[str, float]]:
    """The k most likely next tokens from a logits vector (numpy): (text, log-probability), best first."""
    import numpy as np  # noqa: PLC0415

    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    logp = z - math.log(float(np.exp(z).sum()))
    top = np.argpartition(-logp, k)[:k]
    top = top[np.argsort(-logp[top])]
    return [(decode(int(i)), float(logp[i])) for i in top]


# --- the judge cache's value -----------------------------------------------------------------------------------------


def stored(value: float | dict[str, float]) -> str:
    """The text the cache keeps for P(yes) (a JSON number) or a rubric's probabilities (a JSON object, option ->
    probability): repr-exact, so a hit gives back the very float."""
    return json.dumps(value)


def p_yes_of_stored(text: str) -> float | None:
    """P(yes) from a cached value: a JSON number, or the YesNo JSON caches before held (`{"p_yes": …, "mass": …}`);
    None for anything else (a stale entry: the judge is asked again)."""
    data = _json(text)
    if isinstance(data, dict):
        try:
            return YesNo.model_validate(data).p_yes
        except ValidationError:
            return None
    return float(data) if _probability(data) else None


def choices_of_stored(text: str, options: Sequence[str]) -> dict[str, float] | None:
    """A rubric's probabilities from a cached value: a JSON object of exactly `options`, or the Choices JSON caches
    before held (`{"probabilities": {…}, "mass": …}`); None for anything else (asked again)."""
    data = _json(text)
    if isinstance(data, dict) and set(data) == set(Choices.model_fields):
        try:
            data = Choices.model_validate(data).probabilities
        except ValidationError:
            return None
    if not isinstance(data, dict) or set(data) != set(options) or not all(map(_probability, data.values())):
        return None
    return {o: float(data[o]) for o in options}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _probability(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0
