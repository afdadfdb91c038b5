"""A run's judging context (judges/judging.py Judging): built from the judge's name or instance and the options
(run_judging), and its calibration as the run applies it (calibration_in_effect: the run's map less the families
whose prompts changed since it was fitted), carried by the context the run asks through (with_calibration): the one
place a metric reads it (judge_calls/verdicts.py graded, from the scoring context's judging)."""
from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..judges import Judge, get_judge
from ..judges.calibrated import calibration_of, run_calibration, split_calibration
from ..judges.calibration_map import CalibrationMap
from ..judges.judging import Judging
from ..metrics import Metric
from ..metrics.base import WithVerdicts
from ..prompts.overrides import PromptOverrides, load_overrides


def run_judging(judge: Judge | str | None, judge_options: Mapping[str, Any] | None = None,
                prompts: Mapping[str, str | Path] | None = None) -> Judging:
    """A run's judging context, its cache not yet opened (Judging.cached): the judge (an instance, or built by
    get_judge from a name or path and the options), the calibration the options choose (judges/calibrated.py; with an
    instance, only `calibration` may be among them) and the user's instruction texts for these families (a bad family
    or file: ConfigError before any judging)."""
    made_from = None
    overrides = load_overrides(dict(prompts)) if prompts else None  # a bad file: refused before a judge is built
    if isinstance(judge, Judge):
        calibration = run_calibration(judge, dict(judge_options or {}))
    else:
        backend, chosen = split_calibration(dict(judge_options or {}))
        made_from = (judge, backend)  # what a Dask worker builds its own judge from (run/dask_worker.py)
        judge = get_judge(judge, backend)
        calibration = calibration_of(judge, chosen)
    judging = Judging(judge, prompts=overrides, calibration=calibration)
    judging.made_from = made_from
    return judging


def with_calibration(judging: Judging, calibration: CalibrationMap | None) -> Judging:
    """The judging context with `calibration` in effect (calibration_in_effect, testset's support_calibration): the
    same judge, cache, prompt overrides, counters and call log; the context given is not changed (its
    scoring_fingerprint, the resume checkpoint's key, stays the one of the run's whole calibration)."""
    if calibration is judging.calibration:
        return judging
    twin = copy.copy(judging)
    twin.calibration = calibration
    return twin


def graded_hashes(metrics: list[Metric], overrides: PromptOverrides | None) -> dict[str, dict[str, str]]:
    """Calibration family -> the prompt hashes (WithVerdicts.prompt_hashes) of each metric scored with graded
    verdicts, with the user's overrides."""
    return {m.graded_family: m.prompt_hashes(overrides)
            for m in metrics if isinstance(m, WithVerdicts) and m.graded}


def calibration_in_effect(judging: Judging, metrics: list[Metric]) -> CalibrationMap | None:
    """The run's calibration as a run of `metrics` applies it: a family whose map was fitted under other prompts
    than the run asks (its recorded prompt_sha256, e.g. the user overrode verify_statement since) is left out, with the
    reason in not_applied; None when the run is uncalibrated."""
    return calibration_for(judging, graded_hashes(metrics, judging.prompts))


def calibration_for(judging: Judging, asked: Mapping[str, Mapping[str, str]]) -> CalibrationMap | None:
    """The run's calibration less the families `asked` (calibration family -> {prompt family: template sha256} as
    the run asks them) asks under other prompts than it was fitted under (CalibrationMap.for_prompts, the user's
    overrides named as such); None when the run is uncalibrated. Also `localragas generate`'s
    (testset.generation.support_calibration)."""
    if judging.calibration is None:
        return None
    return judging.calibration.for_prompts(asked, judging.prompts.texts if judging.prompts else ())


def calibrated_families(judging: Judging, metrics: list[Metric]) -> list[str]:
    """The prompt families the run's calibration covers in a run of `metrics` (none when uncalibrated)."""
    calibration = calibration_in_effect(judging, metrics)
    return list(calibration.families) if calibration else []
