"""`localragas calibrate LABELLED --fit FILE --family question_answerable`: the calibration of `generate`'s
answerability check (prompt family question_answerable: "do the contexts state the answer to the question?") fitted on
rows people labelled, and added to FILE with the file's other families kept.

Each row is a question, its contexts and a binary label (1: the contexts answer the question), e.g. WikiQA's
single-chunk rows, where crowd workers marked whether a Wikipedia sentence answers the question. The judge, run
without a calibration, is asked question_answerable per row (through the judge cache) for its raw P(yes); the
logistic map is fitted as `calibrate --fit` fits the metrics' families (calibration_fit.fit_family). Measured beside
it: ROC AUC of the raw P(yes) with its interval, and balanced accuracy at 0.5 raw and cross-fitted (two folds by row:
each row scored by a map fitted on the other fold), so the map's effect is seen on rows it did not see.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..judge_calls.generation import answerable, asking
from ..judge_calls.verdicts import ANSWERABLE_FAMILY
from ..judges.calibration_map import CalibrationMap, FamilyMap, fit_logistic, load_calibration
from ..core.errors import ConfigError
from ..prompts.overrides import template_hashes
from .agreement import balanced_accuracy, bootstrap_statistic, roc_auc
from .calibration_fit import FamilyFit, FamilyItems, fit_family

if TYPE_CHECKING:
    from ..judges import Judging
    from .labelled import LabelledSource

FAMILIES = (ANSWERABLE_FAMILY,)  # what --family fits: a prompt family no metric scores


@dataclass
class AnswerableRun:
    """Each row's raw P(yes) and label, and what was fitted."""

    source: str
    ids: list[str]
    items: FamilyItems
    fit: FamilyFit

    def lines(self) -> list[str]:
        """ROC AUC of the raw P(yes) with its interval; balanced accuracy at 0.5, raw and cross-fitted."""
        y, raw = np.array(self.items.labels), np.array(self.items.raw)
        folds = np.arange(len(y)) % 2
        cross = np.empty_like(raw)
        for f in (0, 1):
            m = FamilyMap(*fit_logistic(raw[folds != f].tolist(), y[folds != f].tolist()))
            cross[folds == f] = [m(v) for v in raw[folds == f]]
        interval, _ = bootstrap_statistic(roc_auc, [y, raw])
        shown = f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
        return [f"{self.source}: {len(y)} rows, {int(y.sum())} labelled 1",
                f"ROC AUC of the raw P(yes): {roc_auc(y, raw):.3f}{shown}",
                f"balanced accuracy at 0.5: raw {balanced_accuracy(y, raw, 0.5):.3f}, cross-fitted "
                f"{balanced_accuracy(y, cross, 0.5):.3f}; mean score raw {raw.mean():.3f}, cross-fitted "
                f"{cross.mean():.3f}, share labelled 1 {y.mean():.3f}"]

    def document(self) -> dict:
        """Each row's raw P(yes) in `calibrate --out`'s layout: one binary result, metric question_answerable."""
        per_row = [{"id": i, "label": y, "score": round(p, 6)}
                   for i, y, p in zip(self.ids, self.items.labels, self.items.raw)]
        return {"results": [{"file": self.source, "metric": ANSWERABLE_FAMILY, "kind": "binary", "per_row": per_row}]}


def ask_answerable(source: "LabelledSource", judging: "Judging", limit: int | None = None,
                   progress: bool = False) -> tuple[list[str], FamilyItems]:
    """Each row's id and raw P(yes) that its contexts state the answer to its question (asked through `judging`, the
    run's judging context, uncalibrated); ConfigError naming the file and line of a row without contexts or with a label that is not binary."""
    from ..data.language import detect  # noqa: PLC0415

    rows = source.rows[:limit] if limit else source.rows
    for r in rows:
        if r.kind != "binary" or not r.sample.contexts:
            raise ConfigError(f"{source.name}:{r.line}: --family {ANSWERABLE_FAMILY} needs a binary label and "
                              "contexts in every row")
    items = FamilyItems(ANSWERABLE_FAMILY, ["generate"], rows=len(rows),
                        prompt_sha256=template_hashes([ANSWERABLE_FAMILY], judging.prompts))
    for n, r in enumerate(rows, 1):
        s = r.sample
        items.raw.append(answerable(asking(judging, detect(s.question)), s.question, list(s.contexts)))
        items.labels.append(int(r.value))
        if progress:
            print(f"\r{n}/{len(rows)} rows", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return [str(r.sample.id) for r in rows], items  # every row named when read (labelled.read_labelled: SampleIds)


def fit_answerable(source: "LabelledSource", judging: "Judging", into: Path, limit: int | None = None,
                   progress: bool = False) -> AnswerableRun:
    """The question_answerable map fitted on the rows (asked through the run's judging context, uncalibrated), written
    into `into` (created, or its other families kept)."""
    ids, items = ask_answerable(source, judging, limit, progress)
    fit = fit_family(items)
    fitted_on = {"items": fit.items, "positives": fit.positives, "source": Path(source.name).name}
    current = load_calibration(into) if into.exists() else CalibrationMap({})
    identity = current.judge or {"name": judging.name, "fingerprint": judging.fingerprint}
    family = FamilyMap(fit.a, fit.b, fitted_on, items.prompt_sha256)
    CalibrationMap({**current.families, ANSWERABLE_FAMILY: family}, identity, current.created).write(into)
    return AnswerableRun(source.name, ids, items, fit)
