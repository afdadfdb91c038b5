"""Scoring one item of a run, wherever an engine runs it (run/local_engine.py, run/dask_worker.py): a sample with
every metric of the run (score_sample), or a task of canaries (score_item). The calibration applied is the run's
judging context's (judges/judging.py Judging.calibration: the one in effect, run/judging_context.py)."""
from __future__ import annotations

import logging
import time
import traceback
from typing import cast

from ..core.errors import CacheError, ConfigError, JudgeError, MissingDependencyError, ModelLoadError
from ..data.conversation_models import Turn, TurnResult
from ..data.schema import MetricResult, Sample, SampleResult, calls_by_prompt
from ..judge_calls.sample_context import Scoring
from ..judge_calls.standalone import FAMILY, rewrite
from ..judges.embeddings import Embedder
from ..judges.judging import Judging
from ..metrics import Metric
from .canaries import Canary, CanaryAnswers

log = logging.getLogger("localragas")


def score_sample(sample: Sample, metrics: list[Metric], judging: Judging, embedder: Embedder | None) -> SampleResult:
    """All metrics on one sample. A failing metric becomes unscored with its reason; the others go on. A
    conversation's follow-up turn is first rewritten into its standalone question (_turn), which the metrics read as
    the sample's question; a failed rewrite leaves every metric of the turn unscored with its reason."""
    started = time.perf_counter()
    ctx = Scoring(sample, judging, embedder)  # its own languages, shared work, call log: safe in parallel
    out = SampleResult(id=cast(str, sample.id), category=sample.category)  # a scored sample has one (as_samples)
    failed: str | None = None
    notes: list[str] = []
    if sample.turn is not None:
        out.turn, failed, notes = _turn(ctx, metrics)
    for m in metrics:
        if failed is not None:
            out.metrics[m.name] = MetricResult.unscored_because(failed)
            continue
        try:
            result = m.score(ctx)
        except Exception as e:  # noqa: BLE001 - one sample's bug must not lose the run (_reason re-raises the fatal)
            result = MetricResult.unscored_because(_reason(e, m.name, sample.id))
        if notes and m.reads_question:  # how its question was written: a conversation cut to fit the window
            result.evidence["warnings"] = [*notes, *result.evidence.get("warnings", [])]
        out.metrics[m.name] = result
    out.seconds = round(time.perf_counter() - started, 3)
    out.judge = {k: round(v, 3) for k, v in ctx.log.stats.counters().items()}
    out.judge_calls = int(out.judge["calls"])
    out.calls_by_prompt = calls_by_prompt(ctx.log.records)
    return out


def _turn(ctx: Scoring, metrics: list[Metric]) -> tuple[TurnResult, str | None, list[str]]:
    """A conversation turn's TurnResult, with the question its metrics read: a follow-up's standalone question written
    by the judge (judge_calls/standalone.py) when a metric of the run reads the question, ctx.sample then a copy whose
    question it is; a given one or a first turn's message as it is. Also the reason every metric of the turn is
    unscored when the rewrite failed (never scored on the follow-up as written), and the rewrite's notes."""
    sample = ctx.sample
    t = cast(Turn, sample.turn)
    turn = TurnResult(conversation=t.conversation, turn=t.turn, turns=t.turns, user_message=t.user_message,
                      question=sample.question)
    if not t.needs_rewrite or not any(m.reads_question for m in metrics):
        return turn, None, []
    try:
        got = rewrite(ctx, t)
    except Exception as e:  # noqa: BLE001 - as a metric's (_reason re-raises the fatal)
        return turn, _reason(e, FAMILY, sample.id), []
    ctx.sample = sample.model_copy(update={"question": got.question})
    turn.question, turn.rewritten = got.question, got.rewritten
    return turn, None, got.notes


def _reason(e: Exception, what: str, sample_id: str | None) -> str:
    """The unscored reason of an error in `what` (a metric, the rewrite): a judge's, or any other (logged); an error
    wrong for every sample is re-raised, to stop the run with a clear message (finished samples are checkpointed)."""
    if isinstance(e, JudgeError):
        return f"judge_error: {e}"
    if isinstance(e, (ConfigError, MissingDependencyError, ModelLoadError, CacheError)):
        raise e
    log.debug("%s failed on %s:\n%s", what, sample_id, traceback.format_exc())
    return f"error: {type(e).__name__}: {e}"


def score_item(item: Sample | Canary, metrics: list[Metric], judging: Judging,
               embedder: Embedder | None) -> SampleResult | CanaryAnswers:
    """What an engine scores (run/engine_base.py Todo): a sample (score_sample), or a task of canaries, asked through
    the same judging context in the same stream (run/canaries.py)."""
    if isinstance(item, Canary):
        return item.ask(judging, metrics)
    return score_sample(item, metrics, judging, embedder)
