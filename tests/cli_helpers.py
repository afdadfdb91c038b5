"""What the tests of every tier share: `localragas ARGS` run in-process, the files they hand it (JSONL, any file,
the fast tier's two-sample rows). tests/ is on sys.path (tests/conftest.py is there), so `from cli_helpers import cli`
works from every tier."""
from __future__ import annotations

import json
import signal
from pathlib import Path

from click.testing import CliRunner, Result

from localragas.cli import main


def cli(*args: object, catch_exceptions: bool = True, input: str | None = None, **env: str) -> Result:
    """`localragas ARGS` (each str()-ed) in-process, on a 200-column console; env: more environment variables.
    catch_exceptions=False: an exception the CLI lets out is raised in the test (click's CliRunner option); input:
    what stdin gives (an answer to a question; it is not a terminal)."""
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200", **env},
                              catch_exceptions=catch_exceptions, input=input)


def code_and_output(*args: object) -> tuple[int, str]:
    """(exit code, output) of `localragas ARGS`, as cli runs it."""
    r = cli(*args)
    return r.exit_code, r.output


def sample_rows(n: int = 2) -> list[dict]:
    """n valid rows (s0, s1, ...) that every metric can score: item i is red, said by context, answer and reference."""
    return [{"id": f"s{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is red."],
             "answer": f"Item {i} is red.", "reference": f"Item {i} is red."} for i in range(n)]


def write_jsonl(path: Path, rows: list, **dumps) -> Path:
    """One line a row: a dict as JSON (json.dumps(row, **dumps)), a str as it is (a broken line, on purpose)."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, **dumps)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def write_file(folder: Path, name: str, data: str | bytes) -> Path:
    """folder/name holding data (a str in UTF-8)."""
    p = folder / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rag_samples.jsonl"
CHATS = EXAMPLES.parent / "chat_samples.jsonl"  # two conversations: plans (2 turns), one of a single turn


def chat_run(folder: Path, *args: object) -> Path:
    """folder/chats.json: the example conversations scored by the fake judge (`eval CHATS ... ARGS`, the gate off
    unless ARGS say otherwise)."""
    out = folder / "chats.json"
    r = cli("eval", CHATS, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-history", "--no-resume",
            "--out", out, *(args or ("--no-gate",)))
    assert r.exit_code == 0, r.output
    return out


def reviewable_run(folder: Path, *args: object) -> Path:
    """folder/run.json: the examples scored by the fake judge (`eval ... ARGS`), each sample keeping its text (the
    `input` a review shows; taken from the data file where the run did not keep it), ready for `localragas review`."""
    out = folder / "run.json"
    r = cli("eval", EXAMPLES, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-history", "--out", out, *args)
    assert r.exit_code in (0, 1), r.output
    rows = {row["id"]: row for row in map(json.loads, EXAMPLES.read_text(encoding="utf-8").splitlines())}
    report = json.loads(out.read_text(encoding="utf-8"))
    for s in report["samples"]:
        row = rows[s["id"]]
        s.setdefault("input", {k: row.get(k) for k in ("question", "answer", "contexts", "reference")})
    out.write_text(json.dumps(report), encoding="utf-8")
    return out


def ctrl_c_as_in_a_terminal() -> None:
    """A child process's SIGINT as a terminal gives it (subprocess.Popen(..., preexec_fn=this), run in the child
    before exec). A test run started in the background by a shell without job control (`bash scripts/test.sh &` in a
    script) inherits SIGINT ignored, and a Python child that starts with SIGINT ignored never raises
    KeyboardInterrupt: the Ctrl-C a test sends to a served page would be lost and the test hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
