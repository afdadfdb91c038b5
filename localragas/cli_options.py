"""What the command modules share: the exit codes (the same for every command, mapped in cli.py) and the options
several commands take: the models (`eval`, `calibrate`, `generate`), the gate and the report formats (`eval`,
`report`, `merge`), the input limit and the prompt files."""
from __future__ import annotations

from pathlib import Path

import click

from .run.gate import GATE_ON
from .core.inputs import DEFAULT_MAX_INPUT_BYTES

EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 3  # never 1: CI must tell a crash from a failed gate
EXIT_NOT_EVALUATED = 4  # a broken judge, cache or embedder: never 0, and not 1 (the data may well be fine)
EXIT_JUDGE_CHECK_FAILED = 5  # the judge cannot tell obvious supported from unsupported items: nothing was scored


def model_options(fn):
    """--judge, --judge-option and --embedder: the models chosen by `eval`, `calibrate` and `generate`."""
    fn = click.option("--embedder", "-e", metavar="NAME|PATH",
                      help="Embedder (eval: for answer_relevancy; generate: linking chunks and finding duplicates): "
                           "minilm-l6 (default), a sentence-transformers folder, or 'fake'.")(fn)
    fn = click.option("--judge-option", multiple=True, metavar="KEY=VALUE",
                      help="Backend setting, e.g. n_ctx=4096, n_threads=2, n_gpu_layers=-1, seed=7. Repeatable.")(fn)
    return click.option("--judge", "-j", metavar="NAME|PATH",
                        help="Judge: a catalogue name (default qwen2.5-1.5b), a .gguf path, 'fake', or "
                             "BACKEND:MODEL.")(fn)


def format_options(fn):
    """--html, --md and --junit: the report formats shared by `eval`, `report` and `merge`."""
    fn = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path),
                      help="Write JUnit XML here: each metric's gate is a test case.")(fn)
    fn = click.option("--md", type=click.Path(dir_okay=False, path_type=Path),
                      help="Write a Markdown summary (for a pull-request comment) here.")(fn)
    return click.option("--html", type=click.Path(dir_okay=False, path_type=Path),
                        help="Write a self-contained HTML report (works offline) here.")(fn)


max_error_rate_option = click.option(
    "--max-error-rate", type=click.FloatRange(0, 1), default=None, metavar="R",
    help="Share (0..1) of each metric's samples an error (judge, embedder, I/O) may leave unscored; beyond it, or "
         "with no scored sample, the metric could not be evaluated: exit 4. Default 0.")

# The gate's options, the same on eval, report and merge (report and merge gate a run made with --no-gate).
threshold_option = click.option(
    "--threshold", "-t", multiple=True, metavar="METRIC=VALUE",
    help="Gate threshold, e.g. faithfulness=0.85, over the default (report, merge: over the run's own). Repeatable.")

no_gate_option = click.option(
    "--no-gate", is_flag=True,
    help="Report scores only; exit 0 unless the input is bad or a metric could not be evaluated (4).")

gate_on_option = click.option(
    "--gate-on", type=click.Choice(GATE_ON), default=None,
    help="Hold the mean (default) or the 95% CI lower bound of each metric against its threshold (report, merge: "
         "default the run's own).")


def regate_options(fn):
    """What `report` and `merge` take to write a stored run again and gate it anew: the formats (format_options),
    then --threshold, --gate-on, --no-gate and --max-error-rate, in that order."""
    for option in (max_error_rate_option, no_gate_option, gate_on_option, threshold_option, format_options):
        fn = option(fn)
    return fn


max_input_bytes_option = click.option(
    "--max-input-bytes", type=click.IntRange(min=1), default=None, metavar="BYTES",
    help="Refuse an input file larger than this (default 4294967296, 4 GiB); a FIFO or device is always refused.")


def report_limit(max_input_bytes: int | None) -> int:
    """--max-input-bytes of `report`, `merge` and `compare` (which read no settings file), else the default."""
    return DEFAULT_MAX_INPUT_BYTES if max_input_bytes is None else max_input_bytes


prompt_option = click.option(
    "--prompt", multiple=True, metavar="FAMILY=FILE",
    help="Replace a prompt family's instruction text with FILE's, e.g. verify_statement=instruction.txt (the data "
         "layout and reply format stay; docs/custom-metrics.md). Repeatable; over the settings file's [prompts].")

ragas_names_option = click.option(
    "--ragas-names", is_flag=True,
    help="Name the metrics in the JSON and CSV files as ragas does, e.g. factual_correctness(mode=f1).")
