"""A short digest of the built-in prompts a run asks, for the resume checkpoints' keys (run.checkpoint.run_key).

The judge cache keys on the full text asked, so a changed prompt is asked again there; a checkpoint keeps finished
outcomes under the run's key, and without the prompts' text in that key a killed run resumed after an upgrade that
changed a built-in prompt would mix outcomes asked with the old text into the new run's result. Each family is
rendered on one fixed probe (its record's `probe`, prompts/families.py), in every language and every variant its
builder has (target kinds, rating variants), so a change anywhere in what is asked (instructions, system prompt,
reminder, reply line, layout) changes the digest. The user's overrides are not applied: Judging.scoring_fingerprint
holds their hash.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .base import Prompt
from .families import FAMILIES, LANGS
from .standalone import FAMILY as STANDALONE


def probe(family: str, lang: str) -> list[Prompt] | None:
    """The family's prompts on the probe in `lang`; None for a family that is not built in (a custom metric's,
    a plugin's: its name alone goes into the digest)."""
    return FAMILIES[family].probe(lang) if family in FAMILIES else None


def prompts_digest(families: Iterable[str], own: Mapping[str, str] | None = None) -> str:
    """sha256 (first 12 hex) of the families' prompts rendered on the probe in every language, in name order (the
    order they are asked in does not matter, a repeated one counts once). `own` maps a family that is not built in (a
    custom criterion's or rubric's) to its template (question, fields, levels), which then counts in its place. About a
    millisecond for a run's families."""
    rendered = []
    for family in sorted(set(families)):
        asked = [[p.name, p.system, p.user] for lang in LANGS for p in probe(family, lang) or ()]
        if not asked and own and family in own:
            asked = [[family, own[family]]]
        rendered.append([family, asked])
    return hashlib.sha256(json.dumps(rendered, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def families_asked(metrics: Iterable[Any], follow_ups: bool = True) -> list[str]:
    """The prompt families a run of these metrics (metrics.base.Metric, a higher layer: not imported) asks, once each,
    in order: theirs, and the standalone question's when one of them reads the question (Metric.reads_question) and
    the run may have a conversation's follow-up turn to rewrite for it (judge_calls/standalone.py; `follow_ups`
    False: its samples have none). What the window check sizes and the report's prompt hashes list (of the run's
    samples), and the digest covers (of any samples: a resumed run's key is made before they are read)."""
    chosen = list(metrics)
    asked = [p for m in chosen for p in m.prompts]
    if follow_ups and any(m.reads_question for m in chosen):
        asked.append(STANDALONE)
    return list(dict.fromkeys(asked))


def metrics_digest(metrics: Iterable[Any]) -> str:
    """prompts_digest of what these metrics ask (families_asked), and a custom metric's own template."""
    chosen = list(metrics)
    return prompts_digest(families_asked(chosen),
                          {p: m.template for m in chosen if getattr(m, "template", None) is not None for p in m.prompts})
