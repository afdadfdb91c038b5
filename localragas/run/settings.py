"""A run's settings, declared once: RunSettings holds each with its type, default, bounds and help text, and how it is
given on the command line (Flag) and whether a settings file may set it (IN_FILE). Everything else is derived from it:
`localragas eval`'s options (cli/options.py setting_option), the settings file's keys (run/config.py), the keyword
arguments of evaluate() and calibrate(), the pytest plugin's options and the resume checkpoint's key (KEYED). EvalIO
declares the same way what `localragas eval` reads and writes: its data file, reports and MLflow.

Layered once, by RunSettings.over: the defaults, then the settings file, then the flags or keyword arguments; a value
not given (None) leaves the one under it, and a table (thresholds, judge options, columns, prompts, metric options)
is merged key by key over the one under it.

    settings = load_settings("localragas.toml").over({"thresholds": {"faithfulness": 0.9}}, "evaluate()")
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Mapping

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from ..core.errors import ConfigError, LocalragasError
from ..core.inputs import DEFAULT_MAX_INPUT_BYTES
from ..core.key_values import parse_columns, parse_metric_options, parse_options, parse_prompts
from ..data.column_map import check_columns
from .gate import check_threshold, parse_thresholds
from .setting_marks import IN_FILE, Flag
from .shard_spec import parse_shard

# The settings that decide a run's results, in the order of the resume checkpoint's key (evaluation.checkpoint_key;
# "judge": the judge's scoring fingerprint), then those in it only when set: a new one goes last there, so that the
# checkpoints of runs without it keep their keys.
KEYED = ("metrics", "judge", "embedder", "limit", "skip_invalid")
KEYED_WHEN_SET = ("shard", "metric_options", "columns")


def key_parts(settings: RunSettings, judge_fingerprint: str) -> list[Any]:
    """The settings' part of the checkpoint key: KEYED's values, then KEYED_WHEN_SET's that are set."""
    return [judge_fingerprint if n == "judge" else getattr(settings, n) for n in KEYED] + \
        [value for n in KEYED_WHEN_SET if (value := getattr(settings, n))]


def _thresholds(items: Iterable[str], where: str) -> dict[str, float]:
    return parse_thresholds(items, None, where)


def _metric_names(value: list[Any] | None) -> list[Any] | None:
    from ..metrics.base import Metric  # noqa: PLC0415 - the metrics load only when a metric object is given

    for item in value or ():
        if not isinstance(item, str) and not isinstance(item, Metric):
            raise ValueError(f"a metric's name (or in Python a Metric), got {item!r}")
    return value


def _as_written(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value  # "EN" is en


def _checked_thresholds(value: dict[str, float]) -> dict[str, float]:
    return {name: check_threshold(name, v) for name, v in value.items()}


def _columns(value: dict[str, str]) -> dict[str, str]:
    try:
        return check_columns(value)
    except ConfigError as e:  # named by validated(): "{where}: key 'columns': ..."
        raise ValueError(str(e).removeprefix("columns: ")) from None


class RunSettings(BaseModel):
    """Every setting of a run (`localragas eval`, evaluate(), calibrate(), the pytest plugin); the defaults are the
    library's. Immutable: `over` gives new settings."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    metrics: Annotated[list[Any] | None, IN_FILE, AfterValidator(_metric_names), Field(  # names; in Python, Metric objects too
        description="Metrics to compute (default: the four RAGAS core metrics). Repeat or comma-separate. "
                    "See `localragas metrics`."),
        Flag(("--metrics", "-m"), "NAME[,NAME]", "items", section="Common")] = None
    metric_options: Annotated[dict[str, dict[str, Any]], IN_FILE, Field(
        description="A metric setting, e.g. answer_correctness.weights=0.5,0.5 or factual_correctness.beta=2. "
                    "Repeatable."),
        Flag(("--metric-option",), "METRIC.KEY=VALUE", "items", parse_metric_options, section="Judge")] = {}
    language: Annotated[Literal["auto", "en", "zh"], IN_FILE, BeforeValidator(_as_written), Field(
        description="Language of the judge's prompts: auto (default: each sample's own, from its script), en or zh."),
        Flag(("--language",), section="Judge")] = "auto"
    judge: Annotated[str | None, IN_FILE, Field(
        description="Judge: a catalogue name (default qwen2.5-1.5b), a .gguf path, 'fake', or BACKEND:MODEL."),
        Flag(("--judge", "-j"), "NAME|PATH", section="Common")] = None
    judge_options: Annotated[dict[str, Any], IN_FILE, Field(
        description="Backend setting, e.g. n_ctx=4096, n_threads=2, n_gpu_layers=-1, seed=7. Repeatable."),
        Flag(("--judge-option",), "KEY=VALUE", "items", parse_options, section="Judge")] = {}
    embedder: Annotated[str | None, IN_FILE, Field(
        description="Embedder (eval: for answer_relevancy; generate: linking chunks and finding duplicates): "
                    "minilm-l6 (default), a sentence-transformers folder, or 'fake'."),
        Flag(("--embedder", "-e"), "NAME|PATH", section="Common")] = None
    thresholds: Annotated[dict[str, float], IN_FILE, AfterValidator(_checked_thresholds), Field(
        description="Gate threshold, e.g. faithfulness=0.85, over the default (report, merge: over the run's own). "
                    "Repeatable."),
        Flag(("--threshold", "-t"), "METRIC=VALUE", "items", _thresholds, section="Gate")] = {}
    gate: Annotated[bool, Field(
        description="Report scores only; exit 0 unless the input is bad or a metric could not be evaluated (4)."),
        Flag(("--no-gate",), kind="off", section="Gate")] = True
    max_error_rate: Annotated[float, IN_FILE, Field(
        ge=0, le=1,
        description="Share (0..1) of each metric's samples an error (judge, embedder, I/O) may leave unscored; beyond "
                    "it, or with no scored sample, the metric could not be evaluated: exit 4. Default 0."),
        Flag(("--max-error-rate",), "R", section="Gate")] = 0.0
    gate_on: Annotated[Literal["mean", "lower-bound"], IN_FILE, Field(
        description="Hold the mean (default) or the 95% CI lower bound of each metric against its threshold (report, "
                    "merge: default the run's own)."),
        Flag(("--gate-on",), section="Gate")] = "mean"
    labels: Annotated[list[Path], IN_FILE, Field(
        description="People's labels on this run's items (`localragas review`; JSON Lines): adds the spot checks to "
                    "the report, and gates a metric with enough labels on its prediction-powered mean "
                    "(docs/spot-checks.md). Repeat or comma-separate for several reviewers' files."),
        Flag(("--labels",), "FILE", "items", section="Gate")] = []
    limit: Annotated[int | None, Field(strict=True, ge=1, description="Evaluate only the first N samples."),
                     Flag(("--limit", "-n"), section="Common")] = None
    shard: Annotated[tuple[int, int] | None, Field(
        description="Evaluate shard I of N (every N-th sample, from the I-th); join the shard reports with "
                    "`localragas merge`."),
        Flag(("--shard",), "I/N", parse=parse_shard, section="Input")] = None
    skip_invalid: Annotated[bool, Field(
        description="Record invalid rows as skipped and go on, instead of stopping."),
        Flag(("--skip-invalid",), kind="toggle", default=False, section="Input")] = False
    columns: Annotated[dict[str, str], IN_FILE, AfterValidator(_columns), Field(
        description="Read a field from a column of another name, e.g. question=query,answer=response. Repeatable."),
        Flag(("--columns",), "FIELD=COLUMN[,FIELD=COLUMN]", "items", parse_columns, section="Input")] = {}
    max_input_bytes: Annotated[int, IN_FILE, Field(
        strict=True, ge=1,
        description="Refuse an input file larger than this (default 4294967296, 4 GiB); a FIFO or device is always "
                    "refused."),
        Flag(("--max-input-bytes",), "BYTES", unit="bytes", section="Input")] = DEFAULT_MAX_INPUT_BYTES
    concurrency: Annotated[int, Field(
        strict=True, ge=1,
        description="Samples judged at once, for a judge server with parallel slots (--judge openai:MODEL). "
                    "In-process judges run one at a time."),
        Flag(("--concurrency",), "N", default=1, section="Run")] = 1
    engine: Annotated[Literal["local", "dask"], IN_FILE, Field(
        description="Where samples are scored: local (default: threads in this process) or dask (the workers of a "
                    "Dask cluster at --address; pip install 'localragas[dask]'; docs/scale-out.md). Not part of the "
                    "resume key: a run resumes on either."),
        Flag(("--engine",), section="Run")] = "local"
    address: Annotated[str | None, IN_FILE, Field(
        description="The Dask scheduler of --engine dask: tcp://HOST:PORT, or local:N (a cluster of N worker "
                    "processes on 127.0.0.1, started and closed by the run). Default: Dask's own scheduler-address "
                    "setting (DASK_SCHEDULER_ADDRESS)."),
        Flag(("--address",), "tcp://HOST:PORT|local:N", section="Run")] = None
    progress: Annotated[bool | None, Field(
        description="Show progress on stderr."),  # None (Python): a bar in a notebook or an interactive session only
        Flag(("--progress/--no-progress",), kind="toggle", default=True, section="Run")] = None
    verbose: Annotated[bool, Field(
        description="Also show the log lines of the Dask cluster of --engine dask (worker start and shutdown, lost "
                    "connections), hidden by default."),
        Flag(("--verbose",), kind="toggle", default=False, section="Run")] = False
    cache_dir: Annotated[Path | None, Field(
        description="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache): a "
                    "re-run of the same command makes no judge call."),
        Flag(("--cache-dir",), section="Run")] = None
    cache: Annotated[bool, Field(description="Neither read nor write the judge cache."),
                     Flag(("--no-cache",), kind="off", section="Run")] = True
    resume: Annotated[bool, Field(
        description="Keep each finished sample in a checkpoint under .localragas/runs; after a crash or kill, the "
                    "same command skips the finished samples. The checkpoint is removed when the run completes."),
        Flag(("--resume/--no-resume",), kind="toggle", default=True, section="Run")] = True
    prompts: Annotated[dict[str, str | Path], IN_FILE, Field(
        description="Replace a prompt family's instruction text with FILE's, e.g. verify_statement=instruction.txt "
                    "(the data layout and reply format stay; docs/custom-metrics.md). Repeatable; over the settings "
                    "file's [prompts]."),
        Flag(("--prompt",), "FAMILY=FILE", "items", parse_prompts, section="Judge")] = {}
    judge_check: Annotated[bool, IN_FILE, Field(
        description="Skip the judge check: obvious supported and unsupported items asked before scoring, a judge "
                    "that cannot tell them apart stops the run (exit 5). For a test setup only; the report says "
                    "skipped."),
        Flag(("--no-judge-check",), kind="off", section="Judge")] = True
    sample_text: Annotated[bool, IN_FILE, Field(
        description="Keep no sample text (question, answer, contexts, reference) in the reports, for data that must "
                    "not be copied into them; the report records it (meta.sample_text false). Default: each sample's "
                    "text, each field at most 20,000 characters and 50 contexts (docs/report-format.md)."),
        Flag(("--no-sample-text",), kind="off", section="Outputs")] = True
    history: Annotated[bool, IN_FILE, Field(
        description="Do not record this run in the run history (.localragas/history.sqlite; `localragas runs`, "
                    "`localragas view`)."),
        Flag(("--no-history",), kind="off", section="Run")] = True
    tags: Annotated[list[str], IN_FILE, Field(
        description="A tag for this run in the run history (filter with `localragas runs --tag`). Repeat or "
                    "comma-separate."),
        Flag(("--tag",), "TAG[,TAG]", "items", section="Run")] = []
    name: Annotated[str | None, Field(
        description="A name for this run in the run history (filter with `localragas runs --name`)."),
        Flag(("--name",), "NAME", section="Run")] = None
    # [custom_metrics.NAME]: a criterion or rubric of the user's (metrics/custom.py), usable by NAME like a built-in
    # once registered (register_custom_metrics: a step of the run, never of reading the file)
    custom_metrics: Annotated[dict[str, dict[str, Any]], IN_FILE] = {}
    config: str | None = None  # the settings file layered in (report.meta["config"]); not a setting of the file
    # where each of `thresholds` was set, as the gate says it ("set with -t", "set in localragas.toml"): recorded by
    # `over` with the thresholds it sets (report.meta.threshold_origins); not a setting
    threshold_origins: dict[str, str] = {}

    @field_validator("address")
    @classmethod
    def _check_address(cls, value: str | None) -> str | None:
        from .engine_address import check_address  # noqa: PLC0415

        return None if value is None else check_address(value)

    def over(self, given: Mapping[str, Any], where: str) -> RunSettings:
        """These settings with `given` over them (a value None is not given; a table merged key by key, metric
        options per metric). An unknown name or a bad value: a ConfigError naming it and `where` it came from."""
        unknown = [k for k in given if k not in type(self).model_fields]
        if unknown:
            near = difflib.get_close_matches(unknown[0], list(type(self).model_fields), n=1)
            raise ConfigError(f"{where}: unknown setting {unknown[0]!r}" + (f" (did you mean {near[0]!r}?)" if near
                              else "") + f"; valid: {', '.join(n for n in RunSettings.model_fields if n not in RECORDS)}")
        values = dict(self)
        values.update({name: _merged(values[name], value) for name, value in given.items() if value is not None})
        if isinstance(given.get("thresholds"), Mapping):
            values["threshold_origins"] = {**self.threshold_origins, **{k: origin_of(where) for k in given["thresholds"]}}
        return validated(values, where, type(self))

    def cache_folder(self) -> Path | None:
        """The judge cache's folder, or None without a cache."""
        return cache_folder(self.cache, self.cache_dir)


def _file(text: str) -> Flag:
    return Flag((f"--{text}",), "FILE", section="Outputs")


class EvalIO(BaseModel):
    """What `localragas eval` reads and where its results go, beside the run's settings: the data file (eval's DATA),
    the reports and MLflow. Declared once: the settings file's keys (IN_FILE; a path relative to the file's folder)
    and eval's options (Flag); `report` and `merge` take the formats' options (--html, --md, --junit) from here too."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # One data file per eval: a report is of one dataset (meta.dataset and its sha256, the resume checkpoint's key,
    # sample ids unique within it, `compare` and `merge` pairing by them); several datasets: an [evals.NAME] each.
    data: Annotated[Path | None, IN_FILE] = None
    out: Annotated[Path | None, IN_FILE, Field(
        description="Write the full JSON report (scores, evidence, run metadata) here."),
        Flag(("--out", "-o"), "FILE", section="Common")] = None
    csv: Annotated[Path | None, IN_FILE, Field(description="Write per-sample scores as CSV here."), _file("csv")] = None
    html: Annotated[Path | None, IN_FILE, Field(
        description="Write a self-contained HTML report (works offline) here."), _file("html")] = None
    md: Annotated[Path | None, IN_FILE, Field(
        description="Write a Markdown summary (for a pull-request comment) here."), _file("md")] = None
    junit: Annotated[Path | None, IN_FILE, Field(
        description="Write JUnit XML here: each metric's gate is a test case."), _file("junit")] = None
    mlflow: Annotated[bool | None, IN_FILE, Field(
        description="Log the run to MLflow tracking (MLFLOW_TRACKING_URI, else MLflow's local default) after the "
                    "reports are written: metric means and intervals, the gate, the judge, the reports "
                    "(pip install \"localragas[mlflow]\"; docs/mlflow.md)."),
        Flag(("--mlflow/--no-mlflow",), kind="toggle", section="Outputs")] = None
    mlflow_experiment: Annotated[str | None, IN_FILE, Field(
        description="The MLflow experiment of --mlflow (created when missing; default: MLflow's own choice)."),
        Flag(("--mlflow-experiment",), "NAME", section="Outputs")] = None
    mlflow_run_name: Annotated[str | None, IN_FILE, Field(
        description="The MLflow run's name with --mlflow (default: localragas DATA-FILE-NAME)."),
        Flag(("--mlflow-run-name",), "NAME", section="Outputs")] = None

    @field_validator("data", mode="before")
    @classmethod
    def _one_data_file(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            raise ValueError("one data file per eval (a report is of one dataset: its sha256, sample ids and resume "
                             "checkpoint); for several, declare an [evals.NAME] table each, or join them into one file")
        return value

    def reports(self) -> dict[str, Path | None]:
        """The report files by flag name (out, csv, html, md, junit), None for a format not asked for."""
        return {n: getattr(self, n) for n in type(self).model_fields if (f := flag_of(n)) and f.metavar == "FILE"}

    def over(self, given: Mapping[str, Any], where: str) -> EvalIO:
        """These with `given` over them (a value None is not given)."""
        return validated({**self.model_dump(), **{k: v for k, v in given.items() if v is not None}}, where, EvalIO)


def _merged(under: Any, over: Any) -> Any:
    """`over` over `under`: tables key by key (a table of tables per inner key), anything else replaced."""
    if isinstance(under, Mapping) and isinstance(over, Mapping):
        return {**under, **{k: _merged(under.get(k), v) for k, v in over.items()}}
    return over


def validated(values: Mapping[str, Any], where: str, model: type[BaseModel] | None = None) -> Any:
    """RunSettings (or `model`) of `values`, a bad one a ConfigError: "{where}: key 'max_error_rate': max error rate
    must be a number in [0, 1], got 2"."""
    try:
        return (model or RunSettings)(**values)
    except ValidationError as e:
        err = e.errors()[0]
        name = ".".join(str(x) for x in err["loc"])
        raise ConfigError(f"{where}: key '{name}': {problem(err)}") from None


def problem(err: Mapping[str, Any]) -> str:
    """A validation error in words from the field's own declaration: its bounds, its choices."""
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, (LocalragasError, ValueError)):
        return str(cause)
    name, got = str(err["loc"][0]), f"got {err['input']!r}"
    field, label = field_of(name), name.replace("_", " ")
    if field is not None and err["type"].split("_")[0] in ("greater", "less", "int", "float", "bool"):
        low, high = bounds(field).get("ge"), bounds(field).get("le")
        if field.annotation in (float, float | None):
            return f"{label} must be a number in [{low:g}, {high:g}], {got}"
        if low is not None:
            unit = f" of {flag.unit}" if (flag := flag_of(name)) and flag.unit else ""
            return f"{label} must be a whole number{unit} >= {low}, {got}"
    if err["type"] == "literal_error":
        return f"{label} must be one of {err['ctx']['expected'].replace(' or ', ', ').replace(chr(39), '')}, {got}"
    return str(err["msg"])


# applied by a run over a data file (run_eval, `localragas eval`), not by evaluate() on samples in hand
OF_A_DATA_RUN = ("limit", "shard", "skip_invalid", "resume", "max_input_bytes")


def refuse(given: Iterable[str], names: Iterable[str], where: str, why: str) -> None:
    """A ConfigError naming the first of `given` in `names`: a setting the caller does not apply."""
    wrong = [n for n in given if n in set(names)]
    if wrong:
        raise ConfigError(f"{where}: setting {wrong[0]!r} {why}")


def field_of(name: str) -> Any:
    """The declaration (pydantic FieldInfo) of a run setting (RunSettings) or of what eval reads and writes (EvalIO);
    None: neither."""
    return RunSettings.model_fields.get(name) or EvalIO.model_fields.get(name)


def bounds(field: Any) -> dict[str, Any]:
    """A field's declared bounds: {"ge": 1}, {"ge": 0, "le": 1}."""
    return {k: getattr(m, k) for m in field.metadata for k in ("ge", "le") if hasattr(m, k)}


def flag_of(name: str) -> Flag | None:
    """The command-line form of a setting (None: it has none)."""
    return next((m for m in field_of(name).metadata if isinstance(m, Flag)), None)


def flagged(model: type[BaseModel] | None = None) -> list[str]:
    """The settings of `model` (default RunSettings) given on the command line, in declaration order (`localragas
    eval`'s options, in --help)."""
    return [n for n in (model or RunSettings).model_fields if flag_of(n) is not None]


def file_keys() -> list[str]:
    """The keys of a settings file and of its [evals.NAME] tables: RunSettings' and EvalIO's fields marked IN_FILE."""
    return [n for model in (RunSettings, EvalIO) for n, field in model.model_fields.items() if IN_FILE in field.metadata]


RECORDS = ("config", "threshold_origins")  # RunSettings' records of where settings came from, not settings


def origin_of(where: str) -> str:
    """How the gate says where a threshold was set, from the `where` of RunSettings.over: "set with -t" (eval's, report's
    and merge's flags), "set in evaluate()", "set in localragas.toml [evals.nightly]" (a settings file's name and
    table)."""
    if where == "flags":
        return "set with -t"
    return f"set in {Path(where).name if Path(where).is_absolute() else where}"


def from_flags(flags: Mapping[str, Any], model: type[BaseModel] | None = None) -> dict[str, Any]:
    """Settings of `model` (default RunSettings) from click's values, keyed by flag (Flag.dest, e.g. judge_option,
    no_gate); a flag left out: its command-line default (--progress, --resume, --concurrency 1). An unknown flag
    name: ConfigError."""
    by_dest = {f.dest: (name, f) for name in flagged(model) if (f := flag_of(name)) is not None}
    unknown = sorted(set(flags) - set(by_dest))
    if unknown:
        raise ConfigError(f"unknown flag(s) {', '.join(unknown)}; valid: {', '.join(by_dest)}")
    return {name: f.value(flags.get(dest, f.default)) for dest, (name, f) in by_dest.items()}


def cache_folder(cache: bool = True, cache_dir: Path | None = None) -> Path | None:
    """The judge cache's folder as every command and the pytest plugin choose it: none without the cache, else
    cache_dir, else .localragas/cache (or $LOCALRAGAS_STATE_DIR/cache)."""
    from ..core import paths  # noqa: PLC0415

    return (Path(cache_dir) if cache_dir is not None else paths.cache_dir()) if cache else None


def register_custom_metrics(settings: RunSettings) -> None:
    """Register the settings file's [custom_metrics] (a step of the run: reading the file registers nothing)."""
    if settings.custom_metrics:
        from ..metrics.custom import declared  # noqa: PLC0415

        declared(settings.custom_metrics, settings.config or "settings", custom_table(settings.config))


def custom_table(source: str | None) -> str:
    """The name of the [custom_metrics] table in a settings file, as its errors name it."""
    return "tool.localragas.custom_metrics" if source and Path(source).name == "pyproject.toml" else "custom_metrics"
