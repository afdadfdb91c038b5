"""Where a judge's calibration comes from, decided in one place: the judge option `calibration` (a file, or `none`),
given on the command line (--judge-option calibration=FILE), in the config file's judge_options, to the pytest plugin
or to the Python API; else the catalogue's shipped file, when the judge's model file is that catalogue entry (its
sha256; an arbitrary GGUF is uncalibrated); else none. The option never reaches the backend's own settings: the map is
the run's (judges/judging.py Judging.calibration), not the judge's."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import catalogue
from .calibration_map import CalibrationMap, load_calibration

if TYPE_CHECKING:
    from .base import Judge

OPTION = "calibration"
OFF = "none"
SHIPPED = Path(__file__).resolve().parent.parent / "calibrations"
_CATALOGUE = object()  # no choice made: the catalogue's, if any


def split_calibration(options: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """(the backend's options, the calibration chosen): a loaded CalibrationMap (from its file, or one given in
    Python), None (`calibration=none`), or the catalogue's (no `calibration` option). A bad file is refused here,
    before any model loads."""
    rest = dict(options or {})
    if OPTION not in rest:
        return rest, _CATALOGUE
    value = rest.pop(OPTION)
    if isinstance(value, CalibrationMap):
        return rest, value
    if value is None or str(value).strip().lower() == OFF:
        return rest, None
    return rest, load_calibration(str(value))


def catalogue_calibration(judge: "Judge") -> CalibrationMap | None:
    """The shipped calibration of the catalogue entry whose file the judge runs (matched by sha256), else None."""
    digest = getattr(judge, "sha256", None)
    entry = next((m for m in catalogue.CATALOGUE.values() if digest and m.sha256 == digest), None)
    if entry is None or not entry.calibration:
        return None
    return load_calibration(SHIPPED / entry.calibration, source=f"catalogue:{entry.name}")


def calibration_of(judge: "Judge", chosen: Any) -> CalibrationMap | None:
    """The map split_calibration's choice names for a run of `judge`: the catalogue's when none was made."""
    return catalogue_calibration(judge) if chosen is _CATALOGUE else chosen


def run_calibration(judge: "Judge", options: dict[str, Any] | None) -> CalibrationMap | None:
    """The calibration a run of a judge already built applies (the Python API, the pytest plugin, eval): from the
    run's judge options, of which only `calibration` may be given (the others build a judge); else the catalogue's."""
    rest, chosen = split_calibration(options)
    if rest:
        from ..core.errors import ConfigError  # noqa: PLC0415

        raise ConfigError(f"judge options {', '.join(sorted(rest))} are for building a judge; this judge is already "
                          f"built (an instance): only '{OPTION}' applies to it")
    return calibration_of(judge, chosen)


def run_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """Of a judge's options, those a run takes beside the judge they built: `calibration` alone."""
    return {OPTION: options[OPTION]} if options and OPTION in options else {}
