"""Compare two runs: pair samples by id, give each metric's change with a paired bootstrap interval and a verdict."""
from __future__ import annotations

from pydantic import BaseModel, Field

from ..metrics.report_definitions import definitions_of
from ..data.schema import Report
from ..run.stats import CI_LEVEL, paired_difference

VERDICTS = ("improved", "regressed", "within_noise", "not_comparable")


class MetricChange(BaseModel):
    metric: str
    base_mean: float | None  # over every scored sample of the base run
    new_mean: float | None
    pairs: int  # samples scored in both runs: the change and its interval are over these
    diff: float | None  # mean of new - base over the pairs
    ci_low: float | None
    ci_high: float | None
    verdict: str  # one of VERDICTS
    higher_is_better: bool = True
    became_unscored: list[str] = Field(default_factory=list)  # scored in base, unscored in new
    became_scored: list[str] = Field(default_factory=list)


class SampleChange(BaseModel):
    id: str
    base: float
    new: float
    diff: float


class Comparison(BaseModel):
    base: str
    new: str
    level: float = CI_LEVEL
    metrics: list[MetricChange]
    largest_changes: dict[str, list[SampleChange]] = Field(default_factory=dict)
    only_in_base: list[str] = Field(default_factory=list)
    only_in_new: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def regressed(self) -> list[str]:
        return [m.metric for m in self.metrics if m.verdict == "regressed"]

    @property
    def improved(self) -> list[str]:
        return [m.metric for m in self.metrics if m.verdict == "improved"]


def verdict_of(pairs: int, ci_low: float | None, ci_high: float | None, higher_is_better: bool) -> str:
    """A change is real when its whole interval lies on one side of zero; otherwise it is within the noise."""
    if pairs < 2 or ci_low is None or ci_high is None:
        return "not_comparable"
    if ci_low > 0:
        return "improved" if higher_is_better else "regressed"
    if ci_high < 0:
        return "regressed" if higher_is_better else "improved"
    return "within_noise"


def _warnings(base: Report, new: Report) -> list[str]:
    out = []
    bj, nj = base.meta.get("judge") or {}, new.meta.get("judge") or {}
    if bj.get("fingerprint") != nj.get("fingerprint"):
        out.append(f"different judges: {bj.get('name', '?')} ({str(bj.get('fingerprint', '?'))[:12]}) vs "
                   f"{nj.get('name', '?')} ({str(nj.get('fingerprint', '?'))[:12]}): a change may be the judge's, "
                   f"not the RAG system's")
    bc, nc = base.meta.get("calibration") or {}, new.meta.get("calibration") or {}
    if bc.get("sha256") != nc.get("sha256"):
        out.append(f"different calibrations: {bc.get('source') or 'none'} vs {nc.get('source') or 'none'}: graded "
                   "scores are on another scale (docs/calibration.md)")
    bp, np_ = ((r.meta.get("prompts") or {}).get("sha256") or {} for r in (base, new))
    changed = sorted(f for f in set(bp) & set(np_) if bp[f] != np_[f])
    if changed:
        out.append(f"different prompts for {', '.join(changed)}: the judge was asked other instructions (a prompt "
                   "override, docs/custom-metrics.md); a change may be the prompt's, not the RAG system's")
    be, ne = (base.meta.get("embedder") or {}).get("name"), (new.meta.get("embedder") or {}).get("name")
    if be != ne and be and ne:
        out.append(f"different embedders: {be} vs {ne}: answer_relevancy is not comparable one to one")
    bt, nt = base.meta.get("thresholds") or {}, new.meta.get("thresholds") or {}
    if bt != nt:
        changed = sorted(k for k in set(bt) | set(nt) if bt.get(k) != nt.get(k))
        out.append("different thresholds for " + ", ".join(f"{k} ({bt.get(k, '-')} -> {nt.get(k, '-')})" for k in changed))
    for name in base.metrics:
        if name not in new.metrics:
            out.append(f"{name} is only in the base run")
    for name in new.metrics:
        if name not in base.metrics:
            out.append(f"{name} is only in the new run")
    return out


def compare_reports(base: Report, new: Report, base_name: str = "base", new_name: str = "new",
                    top: int = 5) -> Comparison:
    """Pair samples by id; for each metric in both runs, the paired change, its interval and a verdict."""
    b_by_id, n_by_id = {s.id: s for s in base.samples}, {s.id: s for s in new.samples}
    common = [i for i in b_by_id if i in n_by_id]
    warnings = _warnings(base, new)
    only_b = [i for i in b_by_id if i not in n_by_id]
    only_n = [i for i in n_by_id if i not in b_by_id]
    if only_b or only_n:
        warnings.append(f"{len(common)} samples in both runs; {len(only_b)} only in the base, {len(only_n)} only in "
                        f"the new run (left out of the paired changes)")
    changes, largest = [], {}
    defined = {**definitions_of(base), **definitions_of(new)}  # a metric's direction: the new run's definition
    for name in [m for m in base.metrics if m in new.metrics]:
        pairs, became_unscored, became_scored = [], [], []
        for i in common:
            b, n = b_by_id[i].metrics.get(name), n_by_id[i].metrics.get(name)
            bv = b.value if b else None
            nv = n.value if n else None
            if bv is not None and nv is not None:
                pairs.append((i, bv, nv))
            elif bv is not None:
                became_unscored.append(i)
            elif nv is not None:
                became_scored.append(i)
        d = paired_difference([p[1] for p in pairs], [p[2] for p in pairs])
        hib = defined[name].higher_is_better
        bs, ns = _mean_of(base, name), _mean_of(new, name)
        changes.append(MetricChange(
            metric=name, base_mean=bs, new_mean=ns, pairs=len(pairs), diff=d["diff"], ci_low=d["ci_low"],
            ci_high=d["ci_high"], verdict=verdict_of(len(pairs), d["ci_low"], d["ci_high"], hib), higher_is_better=hib,
            became_unscored=became_unscored, became_scored=became_scored,
        ))
        moved = sorted((p for p in pairs if p[2] != p[1]), key=lambda p: (-abs(p[2] - p[1]), p[0]))[:top]
        largest[name] = [SampleChange(id=i, base=bv, new=nv, diff=round(nv - bv, 6)) for i, bv, nv in moved]
    return Comparison(base=base_name, new=new_name, metrics=changes, largest_changes=largest, only_in_base=only_b,
                      only_in_new=only_n, warnings=warnings)


def _mean_of(report: Report, metric: str) -> float | None:
    try:
        return report.summary_for(metric).mean
    except KeyError:
        return None
