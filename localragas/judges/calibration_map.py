"""A judge's calibration map: per prompt family (a Prompt's `name`: verify_statement for claims and statements,
judge_chunk for context-precision chunks), a logistic map on the logit of the raw P(yes),

    c = sigmoid(a * logit(clip(p, 1e-6, 1 - 1e-6)) + b),  a > 0,

strictly increasing and from [0, 1] into [0, 1], so it keeps the judge's ranking (ROC AUC unchanged) and changes
only the scale. Families not in the map are not calibrated. The file format (docs/calibration.md):

    {"format": "localragas-calibration/1", "judge": {"name": ..., "sha256": ...},
     "families": {"verify_statement": {"a": 1.7, "b": 0.4, "fitted_on": {"items": 240, "positives": 130, ...}}},
     "created": "2026-01-01T00:00:00+00:00"}

The fit is Newton's method on the two parameters with a tiny ridge, written here rather than taken from
scikit-learn so that an air-gapped install needs no extra dependency.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.number_text import threshold_text

FORMAT = "localragas-calibration/1"
EPS = 1e-6  # P(yes) is clipped to [EPS, 1 - EPS] before the logit
MAX_FILE_BYTES = 1 << 20  # a calibration file holds a few numbers per family


def logit(p: float) -> float:
    p = min(max(p, EPS), 1.0 - EPS)
    return math.log(p / (1.0 - p))


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@dataclass(frozen=True)
class FamilyMap:
    """The logistic map of one prompt family; fitted_on: what it was fitted on (items, positives, source);
    prompt_sha256: the template sha256 of each prompt family its P(yes) were asked with when it was fitted (as a
    report's meta.prompts.sha256 has them; empty in files from before they were recorded: applied under any prompt)."""

    a: float
    b: float
    fitted_on: dict[str, Any] = field(default_factory=dict)
    prompt_sha256: dict[str, str] = field(default_factory=dict)

    def __call__(self, p: float) -> float:
        return sigmoid(self.a * logit(p) + self.b)


@dataclass(frozen=True)
class CalibrationMap:
    """The maps of a judge's prompt families; source: "catalogue:NAME", the file's path, or None (made in Python)."""

    families: dict[str, FamilyMap]
    judge: dict[str, Any] = field(default_factory=dict)
    created: str | None = None
    source: str | None = None
    # family -> why the file's map of it is not applied in this run (for_prompts: its prompt changed since the fit)
    not_applied: dict[str, str] = field(default_factory=dict)

    def covers(self, family: str) -> bool:
        return family in self.families

    def apply(self, family: str, raw: Sequence[float]) -> list[float]:
        """The calibrated values of raw P(yes) of `family`; unchanged when the map has no such family."""
        m = self.families.get(family)
        return list(raw) if m is None else [m(p) for p in raw]

    def for_prompts(self, asked: Mapping[str, Mapping[str, str]], overridden: Collection[str] = ()) -> "CalibrationMap":
        """The map a run applies: without the families whose prompts the run asks differently from those the map was
        fitted under, each with its reason in not_applied. asked: calibration family -> {prompt family: template
        sha256} as the run asks it; overridden: the prompt families the run's user overrides (the reason's wording).
        A family with no recorded prompt hashes (an older file) is kept."""
        kept, dropped = dict(self.families), dict(self.not_applied)
        for family, m in self.families.items():
            now = asked.get(family, {})
            changed = [p for p, sha in m.prompt_sha256.items() if p in now and now[p] != sha]
            if changed:
                del kept[family]
                dropped[family] = "; ".join(
                    f"prompt for {p} {'overridden' if p in overridden else 'changed'} since the calibration was fitted"
                    for p in changed)
        return replace(self, families=kept, not_applied=dropped) if dropped != self.not_applied else self

    def document(self) -> dict[str, Any]:
        """The file's content (what `calibrate --fit` writes)."""
        return {"format": FORMAT, "judge": dict(self.judge),
                "families": {k: {"a": m.a, "b": m.b, "fitted_on": dict(m.fitted_on),
                                 **({"prompt_sha256": dict(m.prompt_sha256)} if m.prompt_sha256 else {})}
                             for k, m in self.families.items()},
                "created": self.created}

    @property
    def sha256(self) -> str:
        """The content hash (of the families' parameters, canonical JSON): part of resume checkpoint keys, never of the
        judge cache's (which keeps raw P(yes))."""
        params = {k: [m.a, m.b] for k, m in sorted(self.families.items())}
        return hashlib.sha256(json.dumps(params, sort_keys=True).encode("utf-8")).hexdigest()

    def describe(self) -> dict[str, Any]:
        """What a report records (meta.calibration)."""
        return {"source": self.source, "sha256": self.sha256,
                "families": {k: {"a": round(m.a, 6), "b": round(m.b, 6)} for k, m in self.families.items()},
                **({"not_applied": dict(self.not_applied)} if self.not_applied else {})}

    def write(self, path: str | Path) -> None:
        from ..core.atomic_write import write_atomic  # noqa: PLC0415

        write_atomic(path, json.dumps(self.document(), indent=2, ensure_ascii=False) + "\n")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _prompt_hashes(value: Any, where: str) -> dict[str, str]:
    """A family's prompt_sha256: prompt family -> a sha256 in hex."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and len(v) == 64
                                              and all(c in "0123456789abcdef" for c in v) for k, v in value.items()):
        raise ConfigError(f"{where}.prompt_sha256': expected an object of prompt family -> sha256 (64 hex digits), "
                          f"got {value!r}")
    return dict(value)


def parse_calibration(doc: Any, shown: str, source: str | None = None) -> CalibrationMap:
    """A CalibrationMap from a file's parsed JSON; errors name the file (`shown`) and the field."""
    if not isinstance(doc, dict):
        raise ConfigError(f"calibration file {shown}: expected a JSON object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise ConfigError(f"calibration file {shown}, field 'format': expected {FORMAT!r}, got {doc.get('format')!r}")
    judge = doc.get("judge", {})
    if not isinstance(judge, dict):
        raise ConfigError(f"calibration file {shown}, field 'judge': expected an object, got {type(judge).__name__}")
    families = doc.get("families")
    if not isinstance(families, dict) or not families:
        raise ConfigError(f"calibration file {shown}, field 'families': expected an object with one entry per prompt "
                          f"family (e.g. verify_statement), got {families!r}")
    maps = {}
    for name, entry in families.items():
        where = f"calibration file {shown}, field 'families.{name}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}': expected an object {{a, b}}, got {type(entry).__name__}")
        for key in ("a", "b"):
            if key not in entry:
                raise ConfigError(f"{where}.{key}': missing")
        a, b = _number(entry["a"], f"{where}.a'"), _number(entry["b"], f"{where}.b'")
        if a <= 0:
            raise ConfigError(f"{where}.a': the slope must be > 0 (a map that keeps the judge's order), got {a}")
        fitted_on = entry.get("fitted_on", {})
        if not isinstance(fitted_on, dict):
            raise ConfigError(f"{where}.fitted_on': expected an object, got {type(fitted_on).__name__}")
        maps[str(name)] = FamilyMap(a, b, fitted_on, _prompt_hashes(entry.get("prompt_sha256", {}), where))
    created = doc.get("created")
    return CalibrationMap(maps, judge, created if isinstance(created, str) else None, source)


def load_calibration(path: str | Path, source: str | None = None) -> CalibrationMap:
    """The calibration file at `path` (source: what the report calls it; default the path)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"calibration file {path} not found (or not a file)")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise ConfigError(f"calibration file {path}: larger than {MAX_FILE_BYTES} bytes; not a calibration file")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"calibration file {path}: not valid JSON: {e}") from None
    return parse_calibration(doc, str(path), source or str(path))


def uncalibrated_note(meta: dict[str, Any]) -> str | None:
    """The line a report shows (terminal, Markdown, HTML) when graded metrics ran on a judge without a calibration for
    them (meta.uncalibrated), else None: which scores are the judge's raw P(yes), why, the thresholds they were held
    against and how to fit a calibration."""
    names = meta.get("uncalibrated") or []
    if not names:
        return None
    judge = (meta.get("judge") or {}).get("name", "?")
    why = list(dict.fromkeys(((meta.get("calibration") or {}).get("not_applied") or {}).values()))
    missing = f"the calibration of judge {judge} is not applied ({'; '.join(why)})" if why else \
        f"no calibration for judge {judge}"
    limits = {n: threshold_text(t) for n, t in (meta.get("thresholds") or {}).items() if n in names}
    if len(set(limits.values())) == 1:
        shown = f"; threshold{'s' if len(limits) > 1 else ''} {next(iter(limits.values()))}"
    else:
        shown = "; thresholds " + ", ".join(f"{n} {t}" for n, t in limits.items()) if limits else ""
    return (f"scores of {', '.join(names)} are the judge's raw P(yes), not a share a person would count: {missing}"
            f"{shown} (fit one: localragas calibrate --fit FILE, docs/calibration.md)")


# --- the fit ----------------------------------------------------------------------------------------------------------

def fit_logistic(p: Sequence[float], y: Sequence[int], ridge: float = 1e-4, steps: int = 100) -> tuple[float, float]:
    """(a, b) maximising the likelihood of labels y (0/1) under sigmoid(a * logit(p) + b), with a ridge
    `ridge * (a^2 + b^2) / 2`: Newton's method on two parameters (the 2x2 Hessian inverted by hand)."""
    xs = [logit(v) for v in p]
    a = b = 0.0
    for _ in range(steps):
        ga, gb = ridge * a, ridge * b  # gradient and Hessian of the penalised negative log-likelihood
        haa, hab, hbb = ridge, 0.0, ridge
        for x, t in zip(xs, y):
            q = sigmoid(a * x + b)
            r, w = q - t, q * (1.0 - q)
            ga, gb = ga + r * x, gb + r
            haa, hab, hbb = haa + w * x * x, hab + w * x, hbb + w
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a - da, b - db
        if abs(da) + abs(db) < 1e-10:
            break
    return a, b


def brier(values: Sequence[float], y: Sequence[int]) -> float:
    """The mean squared difference of the values and the labels."""
    return sum((v - t) ** 2 for v, t in zip(values, y)) / len(values)
