"""The command line: a thin layer over the library. This module holds the command group (`main`, the console
script) and the one error-to-exit mapping every command runs through; each command is in a module of its own beside
it (eval.py, reports.py, calibrate.py, review.py, inventory.py, generate.py), the options several share in options.py
and the outputs checked, written and gated in output.py.

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

import click

from .. import __version__
from ..core.errors import (EngineError, JudgeCheckError, LocalragasError, MethodChangedError, TooFewPairsError,
                           environment_message)
from ..core.printable import printable
from .calibrate import calibrate_cmd
from .eval import eval_cmd
from .generate import generate_cmd, run_rag_cmd
from .inventory import cache_group, metrics_cmd, models_group
from .history import runs_group, view_cmd
from .options import (EXIT_BAD_INPUT, EXIT_ENGINE_LOST, EXIT_INTERNAL_ERROR, EXIT_JUDGE_CHECK_FAILED,
                      EXIT_METHOD_CHANGED, EXIT_TOO_FEW_PAIRS)
from .output import checkpoint_words
from .reports import compare_cmd, merge_cmd, report_cmd
from .review import review_cmd


# The errors with an exit code of their own; any other LocalragasError exits 2 (bad usage, input or environment).
_EXIT_CODES: tuple[tuple[type[LocalragasError], int], ...] = (
    (JudgeCheckError, EXIT_JUDGE_CHECK_FAILED), (MethodChangedError, EXIT_METHOD_CHANGED),
    (EngineError, EXIT_ENGINE_LOST), (TooFewPairsError, EXIT_TOO_FEW_PAIRS))


def _errors_to_exit(fn):
    """A LocalragasError -> its one-line message and its exit code (_EXIT_CODES: 5 the judge cannot judge, 7 compare
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
            sys.exit(next((code for kind, code in _EXIT_CODES if isinstance(e, kind)), EXIT_BAD_INPUT))
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit, BrokenPipeError):
            raise  # click's own: usage errors exit 2, a closed stdout is handled by click
        except OSError as e:
            click.echo(f"Error: {printable(environment_message(e))}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except Exception as e:  # noqa: BLE001 - a bug must not look like a failed gate (exit 1)
            import traceback  # noqa: PLC0415

            click.echo(printable(traceback.format_exc(), newlines=True), err=True, nl=False)
            kept = checkpoint_words()  # only a checkpoint that holds finished work is named
            click.echo(f"Error: internal error {type(e).__name__}: {printable(e)} (a bug in localragas; the traceback "
                       f"is above{printable('; ' + kept) if kept else ''})", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper


class _Main(click.Group):
    """The command group: every command, in every subgroup, runs through the one error-to-exit mapping."""

    def invoke(self, ctx: click.Context):
        return _errors_to_exit(super().invoke)(ctx)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="localragas")
def main() -> None:
    """Score RAG outputs with the RAGAS metrics, fully offline, with a local judge model."""


for _command in (eval_cmd,  # localragas/cli/eval.py
                 metrics_cmd, cache_group, models_group,  # localragas/cli/inventory.py
                 generate_cmd, run_rag_cmd,  # localragas/cli/generate.py
                 report_cmd, merge_cmd, compare_cmd,  # localragas/cli/reports.py
                 calibrate_cmd,  # localragas/cli/calibrate.py
                 review_cmd,  # localragas/cli/review.py
                 runs_group, view_cmd):  # localragas/cli/history.py
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
