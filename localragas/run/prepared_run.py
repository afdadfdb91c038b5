"""A run, built once before any sample is scored (prepare): its samples checked, its metrics chosen, its judging context
with the calibration in effect, its checkpoint and its thresholds. `evaluate()` and `run_eval` (a data file) both build
one and give it to the runner (run/runner.py run_prepared)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..data.field_check import refuse_unscorable
from ..data.lazy_samples import LazySamples
from ..data.schema import Sample, SkippedRow
from ..judge_calls import check_window
from ..prompts.digest import families_asked
from ..judges import Judge
from ..judges.embeddings import Embedder
from ..judges.judging import Judging
from ..metrics import Metric, all_metrics, get_metrics
from .checkpoint import Checkpoint
from .gate import default_thresholds
from .judging_context import calibration_in_effect, run_judging, with_calibration
from .settings import RunSettings, register_custom_metrics

# a checkpoint keyed by what the run's results depend on, made once the run's judging context and metrics are known
# (run/evaluation.py: `eval`'s resume checkpoint), and held from then on
KeyedCheckpoint = Callable[[Judging, list[Metric]], Checkpoint]


@dataclass
class PreparedRun:
    """What a run scores and how, each built once (prepare)."""

    settings: RunSettings
    samples: Sequence[Sample]  # scored: the input (or the shard of it), each with the run's language when one is set
    given: Sequence[Sample]  # the input as given: the names no field read (`ignored`), the spot checks' items
    metrics: list[Metric]
    judging: Judging  # the run's judging context, with the calibration in effect; its cache opened by the runner
    embedder: Embedder | str | None  # an instance, else its name: loaded by the runner if a metric needs it
    checkpoint: Checkpoint | None
    thresholds: dict[str, float]  # of the metrics scored: the settings' over the defaults the calibration in effect sets
    skipped: list[SkippedRow] = field(default_factory=list)
    families: list[str] = field(default_factory=list)  # the prompt families it asks (prompts.digest.families_asked)

    @property
    def covered(self) -> list[str]:
        """The prompt families the calibration in effect covers."""
        return list(self.judging.calibration.families) if self.judging.calibration else []


def prepare(samples: Any, s: RunSettings, *, judge: Judge | Judging | None = None,
            judge_options: Mapping[str, Any] | None = None, embedder: Embedder | None = None,
            skipped: list[SkippedRow] | None = None,
            checkpoint: Checkpoint | str | Path | KeyedCheckpoint | None = None) -> PreparedRun:
    """The run of `samples` with settings `s`, checked before any judge call: the settings' custom metrics
    registered, the samples read (as_samples) with the run's language, the metrics chosen (a metric named that no sample
    can score: DatasetError, before the judge loads), the judging context (a Judging as it is; a Judge instance with
    judge_options' calibration only, never changed; else the settings' judge built), the embedder (an instance, else
    the settings'), the checkpoint (a keyed one made
    from the judging context and metrics, and held), the judge's window checked against the prompts asked, the
    thresholds (one for a metric that does not exist: ConfigError) and the calibration in effect (calibration_in_effect)
    carried by the judging context. A judge built here is closed if the run cannot be prepared."""
    from ..data.sample_inputs import as_samples  # noqa: PLC0415

    register_custom_metrics(s)
    given: Any = as_samples(samples, s.columns)  # a SampleList: the names no field read, the input of a shard
    samples = given
    if s.language != "auto":  # the sample field decides: its hash (resume) changes with it
        samples = (samples.with_language(s.language) if isinstance(samples, LazySamples)
                   else [x.model_copy(update={"language": s.language}) for x in samples])
    chosen = get_metrics(s.metrics, s.metric_options)
    refuse_unscorable(given, chosen, named=[n for n in s.metrics or () if isinstance(n, str)])
    judging = (judge if isinstance(judge, Judging)
               else run_judging(judge, judge_options, s.prompts) if isinstance(judge, Judge)
               else run_judging(s.judge, s.judge_options, s.prompts))
    try:
        if callable(checkpoint):
            checkpoint = checkpoint(judging, chosen)
        elif checkpoint is not None and not isinstance(checkpoint, Checkpoint):
            checkpoint = Checkpoint(checkpoint)
        # a window too small for one item, with the instruction texts as asked (overrides, custom metrics): refused
        own = {family: smallest for m in chosen for family, smallest in m.window_prompts.items()}
        families = families_asked(chosen, has_follow_ups(samples))
        check_window(judging, families, own)
        unknown = sorted(set(s.thresholds) - set(all_metrics()))
        if unknown:
            raise ConfigError(f"threshold for unknown metric(s) {', '.join(unknown)}; valid: "
                              f"{', '.join(all_metrics())}")
    except BaseException:
        if not isinstance(judge, (Judge, Judging)):
            judging.judge.close()
        raise
    in_effect = calibration_in_effect(judging, chosen)
    covered = list(in_effect.families) if in_effect else []
    names = [m.name for m in chosen]
    limits = {k: v for k, v in {**default_thresholds(chosen, covered), **s.thresholds}.items() if k in names}
    return PreparedRun(s, samples, given, chosen, with_calibration(judging, in_effect),
                       embedder if isinstance(embedder, Embedder) else s.embedder, checkpoint, limits,
                       list(skipped or []), families)


def has_follow_ups(samples: Sequence[Sample]) -> bool:
    """Does any sample need its standalone question written (a conversation's follow-up turn: Turn.needs_rewrite)? A
    file read back lazily holds none (conversations are kept in memory: data/dataset.py), so it is not read again."""
    return not isinstance(samples, LazySamples) and any(s.turn is not None and s.turn.needs_rewrite for s in samples)


def check_cache_choice(cache: bool, cache_dir: str | Path | None) -> None:
    if not cache and cache_dir is not None:
        raise ConfigError("cache=False turns the judge cache off, and cache_dir names one: give one of them")
