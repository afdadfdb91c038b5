"""The transformers judge's fingerprint: the weights' sha256 and a hash of what changes a reply."""
from __future__ import annotations

import hashlib
import json

# Whitespace between JSON tokens: optional, one character at most, like llama-cpp-python's grammar (`" "?`).
# Held to compact JSON, SmolLM2 answered {"claims": []} for 3 of 3 probed answers whose claims it lists under
# llama.cpp, where it writes '{ "claims": [ "…'; free whitespace costs tokens (indentation) and lets a model loop.
MAX_WHITESPACE = 1


def fingerprint(sha256: str, dtype: str, max_new_tokens: int, temperature: float, seed: int) -> str:
    """Weights sha256 + decoding settings, the resolved dtype and the JSON style; speed settings (batch size,
    threads) are left out: they do not change a reply."""
    decoding = {"backend": "transformers", "dtype": dtype, "max_new_tokens": max_new_tokens,
                "temperature": temperature, "seed": seed, "grammar": "xgrammar", "max_whitespace": MAX_WHITESPACE}
    digest = hashlib.sha256(json.dumps(decoding, sort_keys=True).encode()).hexdigest()[:16]
    return f"{sha256}:{digest}"
