"""Scoring one item of a run, wherever an engine runs it (run/local_engine.py, run/dask_worker.py): a sample with
every metric of the run (score_sample), or a task of canaries (score_item). The calibration applied is the run's
judging context's (judges/judging.py Judging.calibration: the one in effect, run/judging_context.py)."""
from __future__ import annotations

import logging
import time
import traceback
from typing import cast

from ..core.errors import CacheError, ConfigError, JudgeError, MissingDependencyError, ModelLoadError
from ..data.conversation_models import TurnResult
from ..data.schema import MetricResult, Sample, SampleResult, calls_by_prompt
from ..judge_calls.sample_context import Scoring
from ..judges.embeddings import Embedder
from ..judges.judging import Judging
from ..metrics import Metric
from .canaries import Canary, CanaryAnswers

log = logging.getLogger("localragas")


def score_sample(sample: Sample, metrics: list[Metric], judging: Judging, embedder: Embedder | None) -> SampleResult:
    """All metrics on one sample. A failing metric becomes unscored with its reason; the others go on."""
    started = time.perf_counter()
    ctx = Scoring(sample, judging, embedder)  # its own languages, shared work, call log: safe in parallel
    out = SampleResult(id=cast(str, sample.id), category=sample.category)  # a scored sample has one (as_samples)
    if sample.turn is not None:
        t = sample.turn
        out.turn = TurnResult(conversation=t.conversation, turn=t.turn, turns=t.turns, user_message=t.user_message,
                              question=sample.question)
    for m in metrics:
        try:
            out.metrics[m.name] = m.score(ctx)
        except JudgeError as e:
            out.metrics[m.name] = MetricResult.unscored_because(f"judge_error: {e}")
        except (ConfigError, MissingDependencyError, ModelLoadError, CacheError):
            raise  # wrong for every sample: stop the run with a clear message (finished samples are checkpointed)
        except Exception as e:  # noqa: BLE001 - one sample's bug must not lose the run
            log.debug("metric %s failed on %s:\n%s", m.name, sample.id, traceback.format_exc())
            out.metrics[m.name] = MetricResult.unscored_because(f"error: {type(e).__name__}: {e}")
    out.seconds = round(time.perf_counter() - started, 3)
    out.judge = {k: round(v, 3) for k, v in ctx.log.stats.counters().items()}
    out.judge_calls = int(out.judge["calls"])
    out.calls_by_prompt = calls_by_prompt(ctx.log.records)
    return out


def score_item(item: Sample | Canary, metrics: list[Metric], judging: Judging,
               embedder: Embedder | None) -> SampleResult | CanaryAnswers:
    """What an engine scores (run/engine_base.py Todo): a sample (score_sample), or a task of canaries, asked through
    the same judging context in the same stream (run/canaries.py)."""
    if isinstance(item, Canary):
        return item.ask(judging, metrics)
    return score_sample(item, metrics, judging, embedder)
