"""How a threshold is written, one way everywhere: in the gate's messages and in every report format."""
from __future__ import annotations


def threshold_text(t: float) -> str:
    """0.8 -> '0.80', 0.805 -> '0.805': two decimals unless the threshold has more."""
    return f"{t:.2f}" if round(t, 2) == t else f"{t:g}"
