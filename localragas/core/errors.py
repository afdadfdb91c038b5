"""User-facing errors. Only the CLI (cli/__init__.py) turns these into exit codes and messages."""
from __future__ import annotations

import errno


class LocalragasError(Exception):
    """Base class of every error a user is meant to read."""


class DatasetError(LocalragasError, ValueError):
    """A dataset file or one of its rows is invalid. Names the file, the line and the field. A ValueError too: what
    the Python API raises for bad data (an empty input, a bad row), as a caller catching ValueError expects.

    unit: "line" for a file; "row" for data given in Python (a DataFrame, a list of dicts), numbered from 1."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str, unit: str = "line"):
        self.path, self.line, self.field, self.detail, self.unit = path, line, field, message, unit
        where = path
        if line is not None:
            where += f", {unit} {line}"
        if field:
            where += f", {self._field_word()} '{field}'"
        super().__init__(f"{where}: {message}")

    def _field_word(self) -> str:
        return "field"


class LabelsError(DatasetError):
    """A people's labels file (spot checks, data/labels.py) or one of its lines is invalid, or its labels are not of
    the run they are used on: names the file, the line and the field (a CSV's row and column: unit="row"). Exit 2."""

    def _field_word(self) -> str:
        return "column" if self.unit == "row" else "field"


class ConfigError(LocalragasError):
    """A bad option, threshold, metric name or configuration file."""


class OutputError(LocalragasError):
    """An output path that must not or cannot be written (an input, a folder, another output's file, unwritable).
    Checked before any judging."""


class ModelNotFoundError(LocalragasError):
    """A model file is missing; the message says the exact command that gets it."""


class ModelIntegrityError(LocalragasError):
    """A model file exists but is not the file we pinned (sha256 mismatch, truncated)."""


class ModelLoadError(LocalragasError):
    """A model file could not be loaded (corrupt, wrong format, not enough memory). Stops the run."""


class CacheError(LocalragasError):
    """The judge cache cannot be read or written (corrupt, not a cache, unwritable). Stops the run: a reply the cache
    cannot give is never spread over samples as unscored. The message names the file and the fix.

    corrupt: the file itself is damaged or of another kind (deleting it is the fix), not the place it lives."""

    def __init__(self, message: str, corrupt: bool = False):
        super().__init__(message)
        self.corrupt = corrupt


class CheckpointError(LocalragasError):
    """The resume checkpoint cannot be used: not a file, or held by another live run (found before any judging), or
    it could not be written mid-run (a full disk: the run stops, what was appended before stays). The message says
    the fix."""


class MissingDependencyError(LocalragasError):
    """An optional dependency is not installed; the message names the install command."""


class JudgeError(LocalragasError):
    """The judge could not give a reply for one call (too long a prompt, truncated output, server down).

    The runner records the metric as unscored with this message and goes on; the gate counts it as an error
    (fail closed: beyond --max-error-rate the run could not evaluate the metric, exit 4).
    """


class MethodChangedError(LocalragasError):
    """`compare --fail-on-regression` of two runs that did not measure the same way (metric options, judge,
    calibration, prompts or embedder differ): a regression could be the method's, so the check refuses (exit 7)
    unless --allow-method-change. The message names the differences."""


class TooFewPairsError(LocalragasError):
    """`compare --fail-on-regression` where a compared metric has fewer samples scored in both runs than --min-pairs
    (no sample id in common, most of all): "no regression" cannot be told from "nothing compared", so the check
    refuses (exit 9). The message names the metrics, their pairs and the sample ids each run has alone."""


class EngineError(LocalragasError):
    """The engine a run scores on went away mid-run (`--engine dask`: the scheduler, or every way to reach it), or
    could not be reached at the start. The command line exits 8; the finished samples are in the resume checkpoint,
    so the same command (on any engine) goes on from them."""


class JudgeCheckError(LocalragasError):
    """The judge failed the judge check before any sample was scored (run/judge_check.py): it cannot tell obvious
    supported from unsupported statements, or relevant from irrelevant chunks. The command line exits 5; the message
    names the judge, the family, the figures, items it got wrong and what to try."""


_WHAT_TO_DO: dict[int | None, str] = {
    errno.EACCES: "check its permissions, or choose another path",
    errno.EPERM: "check its permissions, or choose another path",
    errno.ENOENT: "it does not exist: check the path",
    errno.EROFS: "the file system is read-only: choose a path on a writable one",
    errno.ENOSPC: "the disk is full: free space, or choose a path on another disk",
    errno.EDQUOT: "the disk quota is used up: free space, or choose a path on another disk",
    errno.EISDIR: "it is a folder: give a file path",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EEXIST: "a file is in the way where a folder is needed",
    errno.ENAMETOOLONG: "the path is too long",
    errno.ELOOP: "the path loops through symlinks",
}


def environment_message(e: OSError) -> str:
    """An OSError on a user's path (permission, missing folder, read-only file system, full disk…) as one line: the
    path, the problem and what to do."""
    where = " -> ".join(str(p) for p in (e.filename, e.filename2) if p is not None)
    problem = e.strerror or str(e) or type(e).__name__
    todo = _WHAT_TO_DO.get(e.errno, "check the path and the file system")
    return f"{where or type(e).__name__}: {problem}: {todo}"


class TrackingError(LocalragasError):
    """An experiment tracker (MLflow) could not open its store or log a run; the message names the tracking URI, or
    the file, and the fix."""


class HistoryError(LocalragasError):
    """The run history (.localragas/history.sqlite) cannot be read or written: its message names the file and how to
    reset it, or, when another process holds it, says so (wait, or close it: never a reset). A run never fails for
    it (it warns and goes on); `localragas runs` and `view` exit 2."""


class DamagedRunError(HistoryError):
    """One run of the run history cannot be read (its record or scores damaged): names the file, the run and
    `localragas runs rm`; the other runs are listed and shown as ever."""
