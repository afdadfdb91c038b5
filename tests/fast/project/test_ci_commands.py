"""`.ci/run` runs what the README tells a user: its setup command (installing only, as CI scores nothing), then its
test command, each as written there, so CI checks the commands users run and a change to one is a change to both."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _command(heading: str) -> str:
    """The one command of the README's bash block under `heading`."""
    block = re.search(r"```bash\n(.*?)```", README.split(heading, 1)[1], re.S)
    assert block, heading
    [line] = [x.split("#", 1)[0].strip() for x in block.group(1).splitlines() if x.split("#", 1)[0].strip()]
    return line


def _ci_lines() -> list[str]:
    return [line.strip() for line in CI.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readmes_setup_command_then_its_test_command_as_written():
    setup, tests = _command("## Install"), _command("## Run the tests")
    assert setup == "bash scripts/setup.sh"
    lines = _ci_lines()
    assert f"SETUP_SKIP_EVAL=1 {setup}" in lines and tests in lines, lines
    assert lines.index(f"SETUP_SKIP_EVAL=1 {setup}") < lines.index(tests)
    assert lines[-1] == tests  # CI's result is the test command's exit code


def test_ci_run_parses_and_stops_on_the_first_error():
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")]).returncode == 0
    assert "set -euo pipefail" in _ci_lines()
