"""Each setting, given any way a user can give it, is the same setting: its `localragas eval` flag (parsed by click as
the command line parses it), its settings-file key (localragas.toml) and Python (RunSettings(...), and evaluate()'s
keywords as RunSettings.over layers them) give the same RunSettings (EvalIO for what eval reads and writes).
Parametrized over the models' fields: a new field fails here until EXAMPLES gives it a value and its flag's words, and
its flag is in docs/commands.md."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from localragas.cli.eval import eval_cmd
from localragas.run.config import load_eval
from localragas.run.evaluation import eval_from_flags
from localragas.run.settings import RECORDS, EvalIO, RunSettings, file_keys, flag_of

ROOT = Path(__file__).resolve().parents[3]
EVAL_DOC = re.search(r"^## `localragas eval.*?(?=^## )", (ROOT / "docs" / "commands.md").read_text(encoding="utf-8"),
                     re.M | re.S).group()
DOCUMENTED = {flag for row in EVAL_DOC.splitlines() if row.startswith("| `-")  # its flag table's first column
              for flag in re.findall(r"--[a-z][a-z-]*", row.split("|")[1])}
ELSEWHERE = Path("/nonexistent-localragas")  # absolute: a path in the settings file is taken from its folder

# field -> (a value other than the default, the flag's words giving it; None: it has no flag)
EXAMPLES: dict[str, tuple[Any, list[str] | None]] = {
    "metrics": (["faithfulness", "context_recall"], ["-m", "faithfulness,context_recall"]),
    "metric_options": ({"faithfulness": {"statements": "sentences"}, "answer_correctness": {"beta": 2}},
                       ["--metric-option", "faithfulness.statements=sentences", "--metric-option",
                        "answer_correctness.beta=2"]),
    "language": ("zh", ["--language", "zh"]),
    "judge": ("fake", ["-j", "fake"]),
    "judge_options": ({"n_ctx": 4096, "seed": 7}, ["--judge-option", "n_ctx=4096", "--judge-option", "seed=7"]),
    "embedder": ("fake", ["-e", "fake"]),
    "thresholds": ({"faithfulness": 0.85, "context_recall": 0.6}, ["-t", "faithfulness=0.85", "-t",
                                                                   "context_recall=0.6"]),
    "gate": (False, ["--no-gate"]),
    "max_error_rate": (0.25, ["--max-error-rate", "0.25"]),
    "gate_on": ("lower-bound", ["--gate-on", "lower-bound"]),
    "labels": ([ELSEWHERE / "a.jsonl", ELSEWHERE / "b.jsonl"], ["--labels", f"{ELSEWHERE}/a.jsonl,{ELSEWHERE}/b.jsonl"]),
    "limit": (3, ["-n", "3"]),
    "shard": ((2, 4), ["--shard", "2/4"]),
    "skip_invalid": (True, ["--skip-invalid"]),
    "columns": ({"question": "query", "answer": "response"}, ["--columns", "question=query,answer=response"]),
    "max_input_bytes": (1024, ["--max-input-bytes", "1024"]),
    "concurrency": (4, ["--concurrency", "4"]),
    "engine": ("dask", ["--engine", "dask"]),
    "address": ("tcp://127.0.0.1:8786", ["--address", "tcp://127.0.0.1:8786"]),
    "progress": (False, ["--no-progress"]),
    "verbose": (True, ["--verbose"]),
    "cache_dir": (ELSEWHERE / "cache", ["--cache-dir", f"{ELSEWHERE}/cache"]),
    "cache": (False, ["--no-cache"]),
    "resume": (False, ["--no-resume"]),
    "prompts": ({"verify_statement": f"{ELSEWHERE}/instruction.txt"},
                ["--prompt", f"verify_statement={ELSEWHERE}/instruction.txt"]),
    "judge_check": (False, ["--no-judge-check"]),
    "sample_text": (False, ["--no-sample-text"]),
    "history": (False, ["--no-history"]),
    "tags": (["nightly", "gpu"], ["--tag", "nightly", "--tag", "gpu"]),
    "name": ("run-7", ["--name", "run-7"]),
    "custom_metrics": ({"on_topic": {"question": "On topic?", "fields": ["question", "answer"]}}, None),
    # what eval reads and writes (EvalIO)
    "data": (ELSEWHERE / "d.jsonl", None),  # on the command line: eval's DATA argument
    "out": (ELSEWHERE / "r.json", ["-o", f"{ELSEWHERE}/r.json"]),
    "csv": (ELSEWHERE / "r.csv", ["--csv", f"{ELSEWHERE}/r.csv"]),
    "html": (ELSEWHERE / "r.html", ["--html", f"{ELSEWHERE}/r.html"]),
    "md": (ELSEWHERE / "r.md", ["--md", f"{ELSEWHERE}/r.md"]),
    "junit": (ELSEWHERE / "r.xml", ["--junit", f"{ELSEWHERE}/r.xml"]),
    "mlflow": (True, ["--mlflow"]),
    "mlflow_experiment": ("rag", ["--mlflow-experiment", "rag"]),
    "mlflow_run_name": ("nightly", ["--mlflow-run-name", "nightly"]),
}
FIELDS = [(RunSettings, n) for n in RunSettings.model_fields if n not in RECORDS] + \
    [(EvalIO, n) for n in EvalIO.model_fields]


def toml(value: Any) -> str:
    """A value as TOML (inline tables)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return json.dumps(str(value) if isinstance(value, Path) else value)  # JSON's strings, numbers, true/false


def by_flags(words: list[str]) -> tuple[RunSettings, EvalIO]:
    """What `localragas eval d.jsonl WORDS` runs with: its words parsed by click into the eval command's parameters,
    as eval_cmd is given them, then layered (over no settings file: the cwd has none)."""
    params = eval_cmd.make_context("eval", ["d.jsonl", *words]).params
    for own in ("config_path", "eval_name", "ragas_names"):
        params.pop(own)
    return eval_from_flags(params.pop("data"), **params)


def settings(model: BaseModel) -> dict[str, Any]:
    return {n: getattr(model, n) for n in type(model).model_fields if n not in RECORDS}


@pytest.mark.parametrize("model, name", FIELDS, ids=[n for _, n in FIELDS])
def test_a_setting_is_the_same_given_by_its_flag_its_file_key_or_in_python(model, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert name in EXAMPLES, f"{name}: a new field; give it a value and its flag's words in EXAMPLES"
    value, words = EXAMPLES[name]
    python = model(**{name: value})
    assert getattr(python, name) != getattr(model(), name), "the example is the default: it shows nothing"
    ways: dict[str, tuple[BaseModel, BaseModel]] = {"RunSettings.over (evaluate())": (
        model().over({name: value}, "evaluate()"), model())}
    flag = flag_of(name)
    assert (flag is None) == (words is None), f"{name}: EXAMPLES gives flag words for it iff it has a flag"
    if flag is not None:
        assert words is not None and words[0] in [*flag.names, *flag.names[0].split("/")], name
        for long in flag.names[0].split("/"):
            assert long in DOCUMENTED, f"{long} is not in the flag table of docs/commands.md's eval section"
        given, without = by_flags(words), by_flags([])
        ways["flag"] = (given[model is EvalIO], without[model is EvalIO])
    if name in file_keys():
        (tmp_path / "localragas.toml").write_text(f"{name} = {toml(value)}\n", encoding="utf-8")
        ways["settings file"] = (load_eval(tmp_path / "localragas.toml")[model is EvalIO], model())
    assert len(ways) > 1, f"{name}: neither a flag nor a settings-file key gives it"
    for way, (given_so, without_it) in ways.items():
        # the setting, and nothing else, is as Python gives it
        assert settings(given_so) == {**settings(without_it), name: getattr(python, name)}, way
