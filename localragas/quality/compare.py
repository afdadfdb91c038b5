"""Compare two runs: pair samples by id, give each metric's change with a paired bootstrap interval and a verdict; and
whether the two runs measured the same way (quality/method.py), so that a change of method is not taken for a change
of the RAG system. Turns of conversations pair by turn (their ids, "<conversation>#<turn>"), and the interval resamples
conversations, a drawn conversation bringing all its paired turns (run/stats.py)."""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from ..core.errors import MethodChangedError, TooFewPairsError
from ..metrics.report_definitions import definitions_of
from ..data.schema import MetricSummary, Report
from ..run.stats import CI_LEVEL, cluster_codes, cluster_key, paired_difference
from ..data.spot_check_models import MetricSpotCheck
from .method import MethodDifference, method_differences

VERDICTS = ("improved", "regressed", "within_noise", "not_comparable", "not_evaluated")

# The fewest samples scored in both runs a metric's change is judged on (`compare --min-pairs`). Below it the 95%
# paired bootstrap interval is not what it says: on normal differences it holds the true change in 75% of cases at 3
# pairs, 84% at 5 and 90% at 10 (93% at 20), so "within noise" there is no evidence that nothing regressed, and a
# "regressed" may be luck. Fewer pairs: the metric is not comparable, and --fail-on-regression refuses (exit 9).
MIN_PAIRS = 10


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
    # what the means and the change are of: "judge" (the judge's scores, paired by sample) or "prediction-powered"
    # (both runs have enough people's labels of the metric: their prediction-powered means, quality/spot_checks.py)
    estimate: str = "judge"
    note: str | None = None  # why the estimate is what it is, when people's labels are involved


class SampleChange(BaseModel):
    id: str
    base: float
    new: float
    diff: float


class Comparison(BaseModel):
    base: str
    new: str
    level: float = CI_LEVEL
    min_pairs: int = MIN_PAIRS  # a metric with fewer pairs is not comparable (verdict_of)
    metrics: list[MetricChange]
    largest_changes: dict[str, list[SampleChange]] = Field(default_factory=dict)
    in_both: int = 0  # sample ids in both runs (scored or not)
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

    @property
    def undecided(self) -> list[MetricChange]:
        """The compared metrics with fewer pairs than min_pairs: whether they regressed cannot be told."""
        return [m for m in self.metrics if m.verdict == "not_comparable"]

    def undecided_text(self) -> str:
        """Why no verdict could be given, in words ('' when every metric has one): the metrics with too few pairs
        and, when the sample ids differ, how many each run has alone."""
        if not self.undecided:
            return ""
        counted = ", ".join(f"{m.metric} ({m.pairs} pairs)" for m in self.undecided)
        text = f"too few pairs to decide (fewer than --min-pairs {self.min_pairs}): {counted}"
        if self.only_in_base or self.only_in_new:
            text += (f"; {'no sample id is' if not self.in_both else f'only {self.in_both} sample id(s) are'} in both "
                     f"runs ({len(self.only_in_base)} only in the base, {len(self.only_in_new)} only in the new run)")
        return text + ": a regression cannot be ruled out"


def verdict_of(pairs: int, ci_low: float | None, ci_high: float | None, higher_is_better: bool,
               min_pairs: int = MIN_PAIRS) -> str:
    """A change is real when its whole interval lies on one side of zero; otherwise it is within the noise. Over
    fewer than min_pairs pairs (or without an interval) it is not comparable: the interval does not hold what it
    says."""
    if pairs < max(2, min_pairs) or ci_low is None or ci_high is None:
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


def check_enough_pairs(c: Comparison) -> None:
    """`--fail-on-regression`'s refusal of a comparison with a metric over fewer pairs than c.min_pairs (no sample id
    in common, most of all): that metric's regression can be neither found nor ruled out, so the check gives no
    verdict. Raises TooFewPairsError (exit 9) saying why."""
    if c.undecided:
        raise TooFewPairsError(f"--fail-on-regression: {c.undecided_text()}; compare runs over the same samples, or "
                               "give --min-pairs a lower number to gate on fewer pairs")


def compare_reports(base: Report, new: Report, base_name: str = "base", new_name: str = "new",
                    top: int = 5, min_pairs: int = MIN_PAIRS) -> Comparison:
    """Pair samples by id; for each metric in both runs, the paired change, its interval and a verdict: not
    comparable over fewer than min_pairs pairs, not evaluated when neither run scored it for lack of data."""
    b_by_id, n_by_id = {s.id: s for s in base.samples}, {s.id: s for s in new.samples}
    common = [i for i in b_by_id if i in n_by_id]
    defined = {**definitions_of(base), **definitions_of(new)}  # a metric's direction: the new run's definition
    method = method_differences(base, new, defined)
    moved_by_method = {m for d in method for m in d.metrics}
    warnings: list[str] = []
    only_b = [i for i in b_by_id if i not in n_by_id]
    only_n = [i for i in n_by_id if i not in b_by_id]
    if not common:
        warnings.append(f"no sample id in both runs ({len(only_b)} only in the base, {len(only_n)} only in the new "
                        "run): nothing could be paired, so no change was measured (were the sample ids changed?)")
    elif only_b or only_n:
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
        clusters = cluster_codes(np.array([cluster_key(b_by_id[i] if b_by_id[i].turn else n_by_id[i])
                                           for i, _, _ in pairs], dtype=np.int64))
        d = paired_difference([p[1] for p in pairs], [p[2] for p in pairs], clusters=clusters)
        hib = defined[name].higher_is_better
        bs, ns = _summary_of(base, name), _summary_of(new, name)
        verdict = verdict_of(len(pairs), d["ci_low"], d["ci_high"], hib, min_pairs)
        if not any(s is not None and (s.scored or s.errors) for s in (bs, ns)):
            verdict = "not_evaluated"  # every sample of both runs lacked the data it needs: nothing to compare
        changes.append(MetricChange(
            metric=name, base_mean=bs.mean if bs else None, new_mean=ns.mean if ns else None, pairs=len(pairs),
            diff=d["diff"], ci_low=d["ci_low"], ci_high=d["ci_high"], verdict=verdict, higher_is_better=hib,
            became_unscored=became_unscored, became_scored=became_scored, method_changed=name in moved_by_method,
        ))
        changes[-1] = _with_people(changes[-1], _checked(base, name), _checked(new, name))
        moved = sorted((p for p in pairs if p[2] != p[1]), key=lambda p: (-abs(p[2] - p[1]), p[0]))[:top]
        largest[name] = [SampleChange(id=i, base=bv, new=nv, diff=round(nv - bv, 6)) for i, bv, nv in moved]
    return Comparison(base=base_name, new=new_name, min_pairs=min_pairs, metrics=changes, largest_changes=largest,
                      in_both=len(common), only_in_base=only_b, only_in_new=only_n, warnings=warnings,
                      method_differences=method)


Z95 = 1.959964


def _checked(report: Report, metric: str) -> MetricSpotCheck | None:
    return report.spot_checks.metrics.get(metric) if report.spot_checks is not None else None


def _se(c: MetricSpotCheck) -> float | None:
    p = c.ppi_mean
    if p.se is not None:
        return p.se
    return None if p.ci_low is None or p.ci_high is None else (p.ci_high - p.ci_low) / (2 * Z95)


def _with_people(change: MetricChange, base: MetricSpotCheck | None, new: MetricSpotCheck | None) -> MetricChange:
    """The change of the prediction-powered means when both runs have enough people's labels of the metric (the two
    runs' labels are independent: the interval of the difference is the mean's ± 1.96 √(se_base² + se_new²)); else
    the judge's paired change, with a note when only one run has labels."""
    usable = [c is not None and c.trustworthy and c.ppi_mean.mean is not None for c in (base, new)]
    if not any(usable):
        return change
    if not all(usable):
        which = "the base run" if usable[0] else "the new run"
        return change.model_copy(update={"note": (
            f"the judge's means compared: only {which} has enough people's labels of {change.metric}; a "
            "prediction-powered mean is compared only with another (the judge's bias was measured on one run only)")})
    assert base is not None and new is not None
    b, n = base.ppi_mean, new.ppi_mean
    se_b, se_n = _se(base), _se(new)
    assert b.mean is not None and n.mean is not None
    diff = round(n.mean - b.mean, 6)
    lo = hi = None
    if se_b is not None and se_n is not None:
        half = Z95 * (se_b ** 2 + se_n ** 2) ** 0.5
        lo, hi = round(diff - half, 6), round(diff + half, 6)
    judge = (f"the judge's paired change was {change.diff:+.3f}" if change.diff is not None else "")
    return change.model_copy(update={
        "base_mean": b.mean, "new_mean": n.mean, "diff": diff, "ci_low": lo, "ci_high": hi,
        "verdict": verdict_of(min(base.draws, new.draws), lo, hi, change.higher_is_better),
        "estimate": "prediction-powered",
        "note": (f"prediction-powered means compared (people's labels on both runs: {base.draws} and {new.draws} "
                 f"labelled draws; the interval of the change is of two independent means)"
                 + (f"; {judge}" if judge else ""))})


def _summary_of(report: Report, metric: str) -> MetricSummary | None:
    try:
        return report.summary_for(metric)
    except KeyError:
        return None
