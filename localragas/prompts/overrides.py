"""A user's own instruction text for a built-in prompt family, read from a file (`[prompts] FAMILY = FILE`,
`--prompt FAMILY=FILE`): it replaces the family's instruction block, in every language, and nothing else (the data
layout, the tags and the reply line stay, so the output schema is fixed). The report records each family's template
hash (`template_hashes`)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from .base import Prompt
from .families import FAMILIES

# family -> its built-in instruction block, every language and variant (what an override replaces)
TEMPLATES: dict[str, list[str]] = {n: list(f.instructions) for n, f in FAMILIES.items() if f.instructions}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json_sha(value: Any) -> str:
    return _sha(json.dumps(value, ensure_ascii=False))


@dataclass(frozen=True)
class PromptOverrides:
    """family -> the user's text, and the file each came from."""

    texts: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.texts)

    @property
    def sha256(self) -> str:
        """The overrides' content hash (part of the judge's scoring fingerprint: the resume checkpoint's key)."""
        return _sha(json.dumps(self.texts, sort_keys=True, ensure_ascii=False))

    def apply(self, prompt: Prompt) -> Prompt:
        """The prompt with its family's instruction block replaced by the user's; the split offsets after the replaced
        block moved with it."""
        text = self.texts.get(prompt.name)
        found = next((t for t in TEMPLATES[prompt.name] if t in prompt.user), None) if text is not None else None
        if text is None or found is None:
            return prompt
        at = prompt.user.index(found)
        delta = len(text) - len(found)
        user = prompt.user[:at] + text + prompt.user[at + len(found):]
        return replace(prompt, user=user, splits=tuple(s + delta if s > at else s for s in prompt.splits))


def template_hashes(families: list[str], overrides: PromptOverrides | None = None,
                    own: dict[str, str] | None = None) -> dict[str, str]:
    """sha256 of each family's template as used: the override, else a custom metric's own text (`own`: family ->
    its question and levels), else the built-in instruction blocks (a family with none hashes its name)."""
    texts = {**(own or {}), **(overrides.texts if overrides else {})}
    out = {}
    for family in sorted(set(families)):
        if family in texts:
            out[family] = _sha(texts[family])
        else:
            out[family] = _json_sha(TEMPLATES.get(family, [family]))
    return out


def load_overrides(files: dict[str, str | Path], where: str = "--prompt") -> PromptOverrides:
    """The overrides from family -> file (UTF-8 text); a ConfigError names an unknown family (listing the valid
    ones), a missing or empty file."""
    texts, sources = {}, {}
    for family, path in files.items():
        if family not in TEMPLATES:
            raise ConfigError(f"{where}: unknown prompt family {family!r}; valid: {', '.join(TEMPLATES)}")
        p = Path(path).expanduser()
        try:
            text = p.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"{where}: {family}: cannot read {p}: {e}") from None
        if not text:
            raise ConfigError(f"{where}: {family}: {p} is empty")
        texts[family], sources[family] = text, str(p)
    return PromptOverrides(texts, sources)
