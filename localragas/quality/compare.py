"""Compare two runs: pair samples by id, give each metric's change with a paired bootstrap interval and a verdict; and
whether the two runs measured the same way (quality/method.py), so that a change of method is not taken for a change
of the RAG system."""
from __future__ import annotations

from pydantic import BaseModel, Field

from ..core.errors import MethodChangedError
from ..metrics.report_definitions import definitions_of
from ..data.schema import Report
from ..run.stats import CI_LEVEL, paired_difference
from .method import MethodDifference, method_differences

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
    # a difference of method (Comparison.method_differences) may move its scores: its change is not the RAG system's
    method_changed: bool = False


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
    # how the runs' methods differ, in plain words: shown before the changes (a gate setting's differences included,
    # which move no score)
    method_differences: list[MethodDifference] = Field(default_factory=list)

    @property
    def method_changed_for(self) -> list[str]:
        """The compared metrics a difference of method may have moved: their changes mix the RAG system's with the
        method's."""
        return [m.metric for m in self.metrics if m.method_changed]

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


def check_same_method(c: Comparison) -> None:
    """`--fail-on-regression`'s refusal: a regression (or none) between runs that did not measure the same way could
    be the method's, so it is no verdict on the RAG system. Raises MethodChangedError naming the differences."""
    moving = [d.text for d in c.method_differences if d.metrics]
    if moving:
        raise MethodChangedError(
            f"--fail-on-regression: the runs did not measure the same way ({'; '.join(moving)}), so a regression cannot "
            "be told from the change of method; compare runs made the same way, or give --allow-method-change to "
            "gate on these changes anyway")


def compare_reports(base: Report, new: Report, base_name: str = "base", new_name: str = "new",
                    top: int = 5) -> Comparison:
    """Pair samples by id; for each metric in both runs, the paired change, its interval and a verdict."""
    b_by_id, n_by_id = {s.id: s for s in base.samples}, {s.id: s for s in new.samples}
    common = [i for i in b_by_id if i in n_by_id]
    defined = {**definitions_of(base), **definitions_of(new)}  # a metric's direction: the new run's definition
    method = method_differences(base, new, defined)
    moved_by_method = {m for d in method for m in d.metrics}
    warnings: list[str] = []
    only_b = [i for i in b_by_id if i not in n_by_id]
    only_n = [i for i in n_by_id if i not in b_by_id]
    if only_b or only_n:
        warnings.append(f"{len(common)} samples in both runs; {len(only_b)} only in the base, {len(only_n)} only in "
                        f"the new run (left out of the paired changes)")
    changes, largest = [], {}
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
            became_unscored=became_unscored, became_scored=became_scored, method_changed=name in moved_by_method,
        ))
        moved = sorted((p for p in pairs if p[2] != p[1]), key=lambda p: (-abs(p[2] - p[1]), p[0]))[:top]
        largest[name] = [SampleChange(id=i, base=bv, new=nv, diff=round(nv - bv, 6)) for i, bv, nv in moved]
    return Comparison(base=base_name, new=new_name, metrics=changes, largest_changes=largest, only_in_base=only_b,
                      only_in_new=only_n, warnings=warnings, method_differences=method)


def _mean_of(report: Report, metric: str) -> float | None:
    try:
        return report.summary_for(metric).mean
    except KeyError:
        return None
