"""User-facing errors. Only cli.py turns these into exit codes and messages."""
from __future__ import annotations


class LocalragasError(Exception):
    """Base class of every error a user is meant to read."""


class DatasetError(LocalragasError):
    """A dataset file or one of its rows is invalid. Names the file, the line and the field."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str):
        self.path, self.line, self.field, self.detail = path, line, field, message
        where = path
        if line is not None:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


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
    cannot give is never spread over samples as unscored. The message names the file and the fix."""


class MissingDependencyError(LocalragasError):
    """An optional dependency is not installed; the message names the install command."""


class JudgeError(LocalragasError):
    """The judge could not give a reply for one call (too long a prompt, truncated output, server down).

    The runner records the metric as unscored with this message and goes on; the gate counts it as an error
    (fail closed: beyond --max-error-rate the run could not evaluate the metric, exit 4).
    """
