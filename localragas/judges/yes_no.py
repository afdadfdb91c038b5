"""Graded verdicts from token probabilities: P("yes") against P("no") for the first word of the judge's reply.

Each backend hands over its top next-token candidates, as (token text, log-probability) pairs; the spellings of one
word ("yes", "Yes", " yes", '"yes') are pooled. Asked one statement at a time, a small judge's sampled yes/no says
"yes" to nearly anything on topic; the probability keeps the doubt it had (docs/accuracy.md)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..core.errors import JudgeError
from .base import Completion

TOP_TOKENS = 20  # candidates asked of each backend (the OpenAI API's maximum for top_logprobs)
_STRIP = " \t\n\"'`*.:,!“”‘’「」"
WORDS = {"yes": "yes", "no": "no", "是": "yes", "否": "no"}


def word_of(token: str) -> str | None:
    """'yes' or 'no' when a token spells one of them (any case, spacing, quotes), else None."""
    return WORDS.get(token.strip(_STRIP).lower())


def yes_no_reply(candidates: Iterable[tuple[str, float]], prompt_name: str) -> str:
    """The YesNo JSON for the top next-token candidates; JudgeError when neither word is among them."""
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
    return json.dumps({"p_yes": round(pooled["yes"] / mass, 6), "mass": round(min(mass, 1.0), 6)})


def choice_reply(candidates: Iterable[tuple[str, float]], options: Sequence[str], prompt_name: str) -> str:
    """The Choices JSON for the top next-token candidates: each option's pooled probability (any spacing or quotes)
    normalised over the options; JudgeError when none of them is among the candidates."""
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
    return json.dumps({"probabilities": {k: round(v / mass, 6) for k, v in pooled.items()},
                       "mass": round(min(mass, 1.0), 6)})


def top_from_logits(logits, decode, k: int = TOP_TOKENS) -> list[tuple[str, float]]:
    """The k most likely next tokens from a logits vector (numpy): (text, log-probability), best first."""
    import numpy as np  # noqa: PLC0415

    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    logp = z - math.log(float(np.exp(z).sum()))
    top = np.argpartition(-logp, k)[:k]
    top = top[np.argsort(-logp[top])]
    return [(decode(int(i)), float(logp[i])) for i in top]


@dataclass
class NextTokens:
    """A backend's top next-token candidates after a prompt (text, log-probability), best first, and the call's
    token counts."""

    candidates: list[tuple[str, float]]
    prompt_tokens: int
    cached_tokens: int = 0


def completion(reply: str, prompt_tokens: int, cached_tokens: int = 0) -> Completion:
    return Completion(text=reply, prompt_tokens=prompt_tokens, completion_tokens=1, cached_tokens=cached_tokens)
