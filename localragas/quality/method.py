"""Did two runs measure the same way? The differences of method between two reports (the metrics and their options,
the judge, its calibration, the prompts, the embedder, the gate), each in plain words naming both sides, with the
compared metrics whose scores it may move. `compare` shows them before any change it measured."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..core.number_text import threshold_text
from ..data.metric_definition import MetricDefinition
from ..data.schema import Report

ASPECTS = ("metrics", "options", "direction", "judge", "calibration", "prompts", "embedder", "gate")


class MethodDifference(BaseModel):
    aspect: str  # one of ASPECTS
    text: str  # in plain words, both sides named: "faithfulness: statements=sentences in base, claims in new"
    # the compared metrics whose scores it may move; empty: the scores stay comparable (a gate setting, a metric
    # scored in one run only)
    metrics: list[str] = Field(default_factory=list)


def _both(label: str, b: Any, n: Any, names: tuple[str, str]) -> str:
    return f"{label}: {b} in {names[0]}, {n} in {names[1]}"


def _options(name: str, b: dict, n: dict, names: tuple[str, str]) -> str | None:
    keys = [k for k in dict.fromkeys([*b, *n]) if b.get(k) != n.get(k)]
    if not keys:
        return None
    return f"{name}: " + "; ".join(f"{k}={b.get(k, '(not set)')} in {names[0]}, {n.get(k, '(not set)')} in "
                                   f"{names[1]}" for k in keys)


def _judge(r: Report) -> tuple[str | None, str]:
    j = r.meta.get("judge") or {}
    fp = j.get("fingerprint")
    return fp, f"{j.get('name', '?')} ({str(fp or '?')[:12]})"


def _calibration(r: Report) -> tuple[str | None, str, set[str]]:
    c = r.meta.get("calibration") or {}
    sha = c.get("sha256")
    text = f"{c.get('source') or 'a map'} (sha256 {sha[:12]})" if sha else "none"
    return sha, text, set(c.get("families") or {})


def _prompt_source(r: Report, family: str) -> str:
    """Where a run's instructions for a prompt family came from: the user's file, or the built-in text."""
    given = ((r.meta.get("prompts") or {}).get("overridden") or {}).get(family)
    return str(given) if given else f"built-in (localragas {r.meta.get('localragas', '?')})"


def method_differences(base: Report, new: Report, defined: dict[str, MetricDefinition],
                       names: tuple[str, str] = ("base", "new")) -> list[MethodDifference]:
    """What differs in how the two runs measured, in this order: the metrics, each compared metric's options and
    direction, the judge, the calibration, the prompts, the embedder, the gate. `defined`: the definitions of the
    metrics (the new run's over the base's); a difference names the compared metrics whose scores it may move."""
    out: list[MethodDifference] = []
    compared = [m for m in base.metrics if m in new.metrics]
    judged = [m for m in compared if defined[m].uses_judge]
    for run, other, name in ((base, new, names[0]), (new, base, names[1])):
        only = [m for m in run.metrics if m not in other.metrics]
        if only:
            out.append(MethodDifference(aspect="metrics", text=f"metrics: {', '.join(only)} only in {name} (not "
                                                                 "compared)"))
    bo, no = base.meta.get("metric_options") or {}, new.meta.get("metric_options") or {}
    bd, nd = base.definitions, new.definitions
    for m in compared:
        text = _options(m, bo.get(m) or {}, no.get(m) or {}, names)
        if text:
            out.append(MethodDifference(aspect="options", text=text, metrics=[m]))
        if m in bd and m in nd and bd[m].higher_is_better != nd[m].higher_is_better:
            out.append(MethodDifference(aspect="direction", text=_both(m, bd[m].direction, nd[m].direction, names),
                                        metrics=[m]))
    (bf, bj), (nf, nj) = _judge(base), _judge(new)
    if bf != nf:
        out.append(MethodDifference(aspect="judge", text=_both("judge", bj, nj, names), metrics=judged))
    (bs, bc, bfam), (ns, nc, nfam) = _calibration(base), _calibration(new)
    if bs != ns:
        families = bfam | nfam
        moved = [m for m in judged if defined[m].graded_family and (not families or defined[m].graded_family in families)]
        out.append(MethodDifference(aspect="calibration", text=_both("calibration", bc, nc, names) + " (graded scores "
                                    "on another scale)", metrics=moved))
    bp, np_ = ((r.meta.get("prompts") or {}).get("sha256") or {} for r in (base, new))
    changed = sorted(f for f in set(bp) & set(np_) if bp[f] != np_[f])
    if changed:
        text = "; ".join(_both(f, _prompt_source(base, f), _prompt_source(new, f), names) for f in changed)
        out.append(MethodDifference(aspect="prompts", text=f"prompts asked in other words: {text}", metrics=judged))
    be, ne = ((r.meta.get("embedder") or {}).get("name") for r in (base, new))
    if be != ne and be and ne:
        out.append(MethodDifference(aspect="embedder", text=_both("embedder", be, ne, names),
                                    metrics=[m for m in compared if defined[m].uses_embedder]))
    bt, nt = base.meta.get("thresholds") or {}, new.meta.get("thresholds") or {}
    for k in (k for k in dict.fromkeys([*bt, *nt]) if bt.get(k) != nt.get(k)):
        t = [threshold_text(x) if x is not None else "none" for x in (bt.get(k), nt.get(k))]
        out.append(MethodDifference(aspect="gate", text=_both(f"gate threshold of {k}", t[0], t[1], names)))
    if base.gate.enabled and new.gate.enabled and base.gate.on != new.gate.on:
        out.append(MethodDifference(aspect="gate", text=_both("gate on", base.gate.on, new.gate.on, names)))
    return out
