"""What a `localragas generate` run plans: the kinds of item, the mix of them a user asks for (--mix) and how many of
each kind a test set of a given size gets."""
from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import ConfigError

KINDS = ("single", "multi", "abstract", "unanswerable")
DEFAULT_MIX = {"single": 0.5, "multi": 0.25, "abstract": 0.15, "unanswerable": 0.1}


def parse_mix(value: str | Mapping[str, float] | None) -> dict[str, float]:
    """'single=0.5,multi=0.25,…' (or a mapping) -> the share of each kind, summing to 1; a kind not named gets 0."""
    from ..core.key_values import split_item  # noqa: PLC0415

    if value is None:
        return dict(DEFAULT_MIX)
    items = value.items() if isinstance(value, Mapping) else (
        split_item(v, "--mix", "KIND=SHARE", "single=0.5,multi=0.5") for v in value.split(",") if v.strip())
    mix = dict.fromkeys(KINDS, 0.0)
    for kind, share in items:
        if kind not in KINDS:
            raise ConfigError(f"--mix: unknown kind '{kind}'; valid: {', '.join(KINDS)}")
        try:
            mix[kind] = float(share)
        except (TypeError, ValueError):
            raise ConfigError(f"--mix: the share of {kind} must be a number, not {share!r}") from None
        if not mix[kind] >= 0:
            raise ConfigError(f"--mix: the share of {kind} must be >= 0, not {share!r}")
    total = sum(mix.values())
    if total <= 0:
        raise ConfigError("--mix: at least one kind needs a share above 0")
    return {k: v / total for k, v in mix.items()}


def plan(size: int, mix: Mapping[str, float]) -> dict[str, int]:
    """Items per kind: size * share, rounded by the largest remainder (ties in KINDS order)."""
    exact = {k: size * mix.get(k, 0.0) for k in KINDS}
    counts = {k: int(v) for k, v in exact.items()}
    for k in sorted(KINDS, key=lambda k: (-(exact[k] - counts[k]), KINDS.index(k)))[:size - sum(counts.values())]:
        counts[k] += 1
    return counts
