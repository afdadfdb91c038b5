"""Data shapes shared by every module: samples in, results and reports out."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Iterable

from pydantic import (BaseModel, ConfigDict, Field, WrapSerializer, WrapValidator, field_validator, model_serializer,
                      model_validator)

from .conversation_models import Turn, TurnResult
from .metric_definition import MetricDefinition
from .spot_check_models import SpotChecks

# Canonical field -> the other names it is read under: ragas's, deepeval's (input, actual_output, retrieval_context,
# expected_output), promptfoo-style (query, context) and common variants. The one table for files
# (localragas.data.dataset), Python inputs (localragas.data.sample_inputs) and Sample(...) itself.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("sample_id",),
    "question": ("user_input", "input", "query"),
    "contexts": ("retrieved_contexts", "retrieval_context", "context"),
    "answer": ("response", "actual_output"),
    "reference": ("ground_truth", "reference_answer", "expected_output"),
    "category": (),
    "retrieved_context_ids": (),  # ragas's names for the ids of the retrieved and the expected chunks
    "reference_context_ids": (),
    "language": (),
}
# Read only when no other name of its field is given. deepeval's `context` is the ideal context, beside its
# `retrieval_context` (what was retrieved, the one scored); alone (promptfoo's `context` var) it is the retrieved
# context, and a single string is one chunk.
FALLBACK_ALIASES: frozenset[str] = frozenset({"context"})


def field_names(d: Mapping[str, Any], canonical: str, columns: Mapping[str, str] | None = None) -> list[str]:
    """The names under which `canonical` is given in d, the first one to read first.

    columns (canonical -> the user's column name): a mapped field is read from its column only, and a mapped column
    is read as no other field."""
    if columns and canonical in columns:
        return [columns[canonical]] if columns[canonical] in d else []
    taken = set(columns.values()) if columns else set()
    names = [n for n in (canonical, *FIELD_ALIASES[canonical]) if n in d and n not in taken]
    return [n for n in names if n not in FALLBACK_ALIASES] or names


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _accepted(value: Any, name: str) -> Any:
    """A value as Sample's fields take it: an array (numpy, Arrow) as a list, NaN as absent, `context` text as one
    chunk."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if _is_nan(value):
        return None
    if name in FALLBACK_ALIASES and isinstance(value, str):
        return [value]
    return value


class Sample(BaseModel):
    """One RAG interaction to score.

    Fields may be given under the names files accept (FIELD_ALIASES: ragas's user_input, retrieved_contexts,
    response, ...; deepeval's input, actual_output, retrieval_context, expected_output). id is optional: evaluate()
    names a sample without one by its question (dataset.content_id), as files do."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    question: str
    contexts: list[str] = Field(default_factory=list)
    answer: str
    reference: str | None = None
    category: str | None = None
    # ids of the retrieved chunks (in rank order) and of the chunks that should have been retrieved: the non-LLM
    # id_based_context_precision / id_based_context_recall metrics
    retrieved_context_ids: list[str] | None = None
    reference_context_ids: list[str] | None = None
    language: str | None = None  # "en" or "zh": the prompts' language for this sample (default: from its script)
    # a turn of a conversation: its place and what came before it (data/conversation_models.py); None for a
    # single question-answer sample
    turn: Turn | None = None

    @model_validator(mode="before")
    @classmethod
    def _canonical_names(cls, data: Any) -> Any:
        """Aliases as canonical names (two names of one field must agree); arrays as lists; NaN as absent."""
        if not isinstance(data, Mapping):
            return data
        aliases = {n for names in FIELD_ALIASES.values() for n in names}
        out = {k: v for k, v in data.items() if k not in aliases}
        for canonical in FIELD_ALIASES:
            names = field_names(data, canonical)
            values = [_accepted(data[n], n) for n in names]
            for other, value in zip(names[1:], values[1:]):
                if value != values[0]:
                    raise ValueError(f"'{names[0]}' and '{other}' are both given, with different values")
            if names:
                out[canonical] = values[0]
        if isinstance(out.get("id"), int) and not isinstance(out["id"], bool):
            out["id"] = str(out["id"])
        if isinstance(out.get("id"), str):
            out["id"] = out["id"].strip() or None
        return out

    @field_validator("reference", "category")
    @classmethod
    def _blank_is_absent(cls, v: str | None) -> str | None:
        return v if v is None or v.strip() else None

    @field_validator("retrieved_context_ids", "reference_context_ids", mode="before")
    @classmethod
    def _ids_as_text(cls, v: object) -> object:
        """Ids compare as text (ragas does the same): 7 and "7" are one id."""
        if isinstance(v, (list, tuple)):
            return [str(x).strip() if isinstance(x, (int, str)) and not isinstance(x, bool) else x for x in v]
        return v

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        v = v.strip().lower()
        if v not in ("en", "zh"):
            raise ValueError(f"language must be 'en' or 'zh', got {v!r}")
        return v


class MetricResult(BaseModel):
    """A metric's value for one sample, or the reason it could not be scored, with its evidence."""

    value: float | None = None
    unscored: str | None = None  # reason; set exactly when value is None
    evidence: dict[str, Any] = Field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return self.value is not None

    @classmethod
    def of(cls, value: float, **evidence: Any) -> "MetricResult":
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"metric value {value} outside [0, 1]")
        return cls(value=float(value), evidence=evidence)

    @classmethod
    def fraction(cls, flags: list[bool], **evidence: Any) -> "MetricResult":
        if not flags:
            raise ValueError("fraction of an empty list")
        return cls.of(sum(flags) / len(flags), **evidence)

    @classmethod
    def unscored_because(cls, reason: str, **evidence: Any) -> "MetricResult":
        return cls(value=None, unscored=reason, evidence=evidence)


_PER_CALL = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "seconds": 0.0}


def calls_by_prompt(log: Iterable[dict[str, Any]]) -> dict[str, dict[str, int | float]]:
    """A sample's judge calls (CallLog records) summed per prompt family, in the order first asked: `calls`
    that ran the model, `cache_hits`, prompt / completion / cached tokens, seconds. As many entries as families,
    however many calls: a large run does not hold a record of every call."""
    out: dict[str, dict[str, int | float]] = {}
    for call in log:
        row = out.setdefault(str(call.get("prompt")), {"calls": 0, "cache_hits": 0, **_PER_CALL})
        row["cache_hits" if call.get("cache_hit") else "calls"] += 1
        for k in _PER_CALL:
            row[k] += call.get(k) or 0
    for row in out.values():
        row["seconds"] = round(row["seconds"], 3)
    return out


class SampleInput(BaseModel):
    """A sample's text as a report keeps it (data/sample_text.py: each text bounded, a cut marked in it): the fields
    as scored, all four keys always present (null / [] when the sample lacks one)."""

    question: str
    answer: str | None = None
    contexts: list[str] = Field(default_factory=list)
    reference: str | None = None


class SampleResult(BaseModel):
    id: str
    category: str | None = None
    # the sample's text (question, answer, contexts, reference), bounded; absent when the run kept none
    # (--no-sample-text, meta.sample_text false) and in reports written before it was kept
    input: SampleInput | None = None
    input_truncated: bool = False  # a bound cut some of `input` (written only when true)
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    seconds: float = 0.0
    judge_calls: int = 0
    # judge counters for this sample: calls, cache_hits, prompt_tokens, completion_tokens, cached_tokens, seconds
    judge: dict[str, float] = Field(default_factory=dict)
    calls_by_prompt: dict[str, dict[str, int | float]] = Field(default_factory=dict)  # see calls_by_prompt()
    turn: TurnResult | None = None  # a conversation's turn: its place, the user's message, the question as scored

    @model_validator(mode="before")
    @classmethod
    def _summarise_call_list(cls, data: Any) -> Any:
        """Reports and checkpoints written before calls_by_prompt listed every call (`calls`): read as its sum."""
        if isinstance(data, dict) and "calls" in data:
            data = dict(data)
            calls = data.pop("calls")
            if "calls_by_prompt" not in data and isinstance(calls, list):
                data["calls_by_prompt"] = calls_by_prompt(c for c in calls if isinstance(c, dict))
        return data

    @model_serializer(mode="wrap")
    def _text_only_when_kept(self, handler: Any) -> Any:
        """`input` written only when kept, `input_truncated` only when true: a run without the text writes none."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("input") is None:
                data.pop("input", None)
            if not data.get("input_truncated"):
                data.pop("input_truncated", None)
            if data.get("turn") is None:
                data.pop("turn", None)
        return data


class SampleSequence(Sequence[SampleResult]):
    """A report's results kept elsewhere than in a list (data/result_store.py: on disk, read back one at a time):
    Report.samples takes one as it is, and a whole-report dump (model_dump, model_dump_json) reads every result."""


def _keep_sequence(value: Any, handler: Any) -> Any:
    """A SampleSequence as it is; anything else validated into a list, as always."""
    if isinstance(value, SampleSequence):
        return value
    validated = handler(value)
    return validated if isinstance(validated, list) else list(validated)


def _dump_sequence(value: Any, handler: Any) -> Any:
    return handler(value if isinstance(value, list) else list(value))


# Report.samples: a list of results, or a SampleSequence taken as it is
Samples = Annotated[Sequence[SampleResult], WrapValidator(_keep_sequence), WrapSerializer(_dump_sequence)]


class SkippedRow(BaseModel):
    """An input row that could not be loaded (kept with --skip-invalid)."""

    path: str
    line: int | None
    field: str | None
    reason: str


class MetricSummary(BaseModel):
    metric: str
    mean: float | None
    scored: int
    unscored: int
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    # 95% percentile-bootstrap interval of the mean (seeded; None with fewer than 2 scored samples)
    ci_low: float | None = None
    ci_high: float | None = None
    higher_is_better: bool = True  # False for noise sensitivity: reports say "lower is better"
    # unscored because of an error (judge, cache, embedder, I/O), not because the sample lacked data (no_*)
    errors: int = 0
    first_error: str | None = None  # the first such reason in full, to say why


class MetricErrors(BaseModel):
    """A metric some of whose samples an error left unscored. Not `allowed`: the run could not evaluate it (exit 4)."""

    metric: str
    errors: int
    samples: int
    rate: float
    allowed: bool  # within the max error rate, and the metric has a scored sample
    first_error: str | None = None
    message: str = ""


class GateResult(BaseModel):
    metric: str
    threshold: float
    mean: float | None
    status: str  # "passed" | "failed" | "not_evaluated" | "error" (could not evaluate: see Gate.errors)
    message: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    compared: float | None = None  # the value held against the threshold: the mean, or the CI's lower bound
    higher_is_better: bool = True  # False (noise sensitivity): passes when the value is at most the threshold
    # why this threshold: "calibrated default", "uncalibrated default", "verdicts=json default", "default" (a metric
    # without verdicts modes), or where it was set: "set with -t", "set in localragas.toml" (a settings file, with its
    # [evals.NAME] table), "set in evaluate()" ("given" in a report written before those were recorded; "" before the
    # field)
    threshold_source: str = ""
    # what was held against the threshold: "judge" (the judge's mean, or its interval's bound) or "prediction-powered"
    # (people's spot checks, report.spot_checks: their PPI++ mean, or its interval's bound; mean, ci_low and ci_high
    # are then that estimate's)
    estimate: str = "judge"


class Gate(BaseModel):
    enabled: bool
    passed: bool
    on: str = "mean"  # "mean" | "lower-bound"
    results: list[GateResult] = Field(default_factory=list)
    max_error_rate: float = 0.0  # share of a metric's samples an error may leave unscored
    evaluated: bool = True  # False: a metric could not be evaluated (errors beyond max_error_rate); never passes
    errors: list[MetricErrors] = Field(default_factory=list)


class Report(BaseModel):
    """Everything a run produced: per-sample results with evidence, aggregates, gate and run metadata."""

    meta: dict[str, Any] = Field(default_factory=dict)
    metrics: list[str]
    # each metric's definition as the run used it (data/metric_definition.py); a report written before this field has
    # none, and its readers take the registry's for a metric it knows (metrics.definitions_of)
    definitions: dict[str, MetricDefinition] = Field(default_factory=dict)
    summary: list[MetricSummary] = Field(default_factory=list)
    by_category: dict[str, list[MetricSummary]] = Field(default_factory=dict)
    gate: Gate
    # people's spot checks of the judge's verdicts on this run (quality/spot_checks.py; docs/spot-checks.md): absent
    # without labels
    spot_checks: SpotChecks | None = None
    samples: Samples = Field(default_factory=list)  # a large run's: a SampleSequence on disk (run/results.py)
    skipped: list[SkippedRow] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _spot_checks_only_when_made(self, handler: Any) -> Any:
        """`spot_checks` written only when the run has labels: a report without them is as it always was."""
        data = handler(self)
        if isinstance(data, dict) and data.get("spot_checks") is None:
            data.pop("spot_checks", None)
        return data

    def summary_for(self, metric: str) -> MetricSummary:
        for s in self.summary:
            if s.metric == metric:
                return s
        raise KeyError(metric)

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per sample: id, category, a turn's conversation and turn number when the
        results hold conversations, the sample's text when the run kept it (question, answer, contexts as a list,
        reference), each metric's value (NaN when unscored), each metric's unscored reason (`{metric}_unscored`),
        seconds: the columns of the CSV report."""
        from .report_views import sample_frame  # noqa: PLC0415

        return sample_frame(self)

    def conversations(self) -> list[Any]:
        """One ConversationSummary per conversation the results are turns of (none for single samples), in the
        order they first appear: its turns, each metric's mean over its scored turns, its worst turn (value and id),
        and the turns a metric does not apply to (data/conversation_summary.py)."""
        from .conversation_summary import conversation_summaries  # noqa: PLC0415

        return list(conversation_summaries(self))

    def conversations_frame(self) -> Any:
        """A pandas DataFrame, one row per conversation: conversation, category, turns, and per metric its mean
        over the conversation's scored turns (`{metric}`), its worst turn's value and id (`{metric}_worst`,
        `{metric}_worst_turn`); empty (those columns) when no result is a turn."""
        from .report_views import conversation_frame  # noqa: PLC0415

        return conversation_frame(self)

    def summary_frame(self) -> Any:
        """A pandas DataFrame, one row per metric: mean, ci_low, ci_high, threshold, passed, status, scored,
        unscored."""
        from .report_views import summary_frame  # noqa: PLC0415

        return summary_frame(self)

    def plot(self, metrics: list[str] | None = None) -> Any:
        """A matplotlib Figure: per metric (all, or those named), a histogram of its sample scores over [0, 1] with
        its gate threshold and its mean with the interval. Needs matplotlib (`pip install matplotlib`); shown in
        Jupyter when it is a cell's value, `.savefig(path)` writes it."""
        from .report_views import plot  # noqa: PLC0415

        return plot(self, metrics)

    def __repr__(self) -> str:
        """A few lines (verdict, each metric's mean and interval); the whole report is model_dump_json()."""
        from .report_views import text  # noqa: PLC0415

        return text(self)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        from .report_views import html_table  # noqa: PLC0415

        return html_table(self)
