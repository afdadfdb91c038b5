"""The GitHub Action (action.yml), the GitLab CI template and ci/run-eval.sh, the one script both run: the script end
to end with the fake judge (inputs as the environment variables the action sets), its inputs checked, and the two
YAML files well formed, with every input the action declares used."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from localragas import Report
from localragas.judges import catalogue

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "ci" / "run-eval.sh"
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
GITLAB = yaml.safe_load((ROOT / "ci" / "gitlab" / "localragas.gitlab-ci.yml").read_text(encoding="utf-8"))
SCRIPT_TEXT = SCRIPT.read_text(encoding="utf-8")
EXAMPLES = ROOT / "examples" / "rag_samples.jsonl"


def env_name(action_input: str) -> str:
    return "INPUT_" + action_input.upper().replace("-", "_")


def run(tmp_path: Path, *args: str, **inputs: str) -> subprocess.CompletedProcess:
    """ci/run-eval.sh in tmp_path, as a GitHub runner would run it: INPUT_* variables, GITHUB_STEP_SUMMARY and
    GITHUB_OUTPUT files; `localragas` and `python` from this interpreter's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", "PYTHON": sys.executable,
                "PYTHONPATH": str(ROOT), "LOCALRAGAS_STATE_DIR": str(tmp_path / "state"),
                "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output")})
    env.update({env_name(k): v for k, v in inputs.items()})
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)


def outputs(tmp_path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())


def test_the_script_runs_the_eval_writes_every_report_and_exits_with_the_gate(tmp_path):
    done = run(tmp_path, data=str(EXAMPLES), judge="fake", embedder="fake", args="--no-resume")
    assert done.returncode == 1, done.stderr[-2000:]  # the fake judge's answer relevancy 0.325 < 0.75
    reports = tmp_path / "localragas-reports"
    assert sorted(p.name for p in reports.iterdir()) == ["junit.xml", "report.html", "report.json", "summary.md"]
    report = Report.model_validate_json((reports / "report.json").read_text(encoding="utf-8"))
    assert report.meta["judge"]["name"] == "fake" and not report.gate.passed and len(report.samples) == 16
    assert (tmp_path / "step-summary.md").read_text(encoding="utf-8") == (reports / "summary.md").read_text(
        encoding="utf-8")
    assert outputs(tmp_path) == {"exit-code": "1", "gate": "failed", "report-dir": "localragas-reports"}
    assert (tmp_path / ".localragas" / "cache").is_dir()  # the judge's replies, where the action caches them
    assert "models pull" not in done.stdout  # the fake judge has no file to pull


def test_metrics_and_thresholds_reach_the_eval_and_a_passed_gate_exits_0(tmp_path):
    done = run(tmp_path, data=str(EXAMPLES), judge="fake", embedder="fake", metrics="faithfulness,\nanswer_relevancy",
               thresholds="faithfulness=0.6, answer_relevancy=.3", **{"output-dir": "out", "cache-dir": "replies"})
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["metrics"] == ["faithfulness", "answer_relevancy"]
    assert {r["metric"]: r["threshold"] for r in report["gate"]["results"]} == {"faithfulness": 0.6,
                                                                              "answer_relevancy": 0.3}
    assert outputs(tmp_path)["gate"] == "passed" and (tmp_path / "replies").is_dir()


@pytest.mark.parametrize(("inputs", "named", "says"), [
    ({}, "data", "no dataset given"),
    ({"data": "missing.jsonl"}, "data", "no such file or folder: missing.jsonl"),
    ({"data": str(EXAMPLES), "thresholds": "faithfulness=0.8, context_recall=high"}, "thresholds",
     "'context_recall=high' is not METRIC=NUMBER"),
    ({"data": str(EXAMPLES), "thresholds": "0.8"}, "thresholds", "'0.8' is not METRIC=NUMBER"),
    ({"data": str(EXAMPLES), "config": "nope.toml"}, "config", "no such settings file: nope.toml"),
])
def test_a_bad_input_fails_before_the_eval_naming_the_input(tmp_path, inputs, named, says):
    done = run(tmp_path, judge="fake", **inputs)
    assert done.returncode == 2
    assert f"localragas: input '{named}': {says}" in done.stderr
    assert f"::error title=localragas input '{named}'::" in done.stdout  # a GitHub annotation on the job's page
    assert not (tmp_path / "localragas-reports").exists()


def test_without_a_data_input_the_settings_files_data_key_is_scored_and_keyed(tmp_path):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "rag.toml").write_text(f'data = "{EXAMPLES.as_posix()}"\nmetrics = ["faithfulness"]\n'
                                              'judge_check = false\n[thresholds]\nfaithfulness = 0.1\n')
    done = run(tmp_path, judge="fake", embedder="fake", config="ci/rag.toml")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "localragas-reports" / "report.json").read_text(encoding="utf-8"))
    assert report["metrics"] == ["faithfulness"] and len(report["samples"]) == 16
    keys = run(tmp_path, "keys", judge="fake", config="ci/rag.toml").stdout.split()
    assert keys[1] == f"data={catalogue.dataset_sha256(EXAMPLES)[:16]}"
    (tmp_path / "ci" / "rag.toml").write_text('metrics = ["faithfulness"]\n')
    done = run(tmp_path, judge="fake", config="ci/rag.toml")
    assert done.returncode == 2 and "input 'data': no dataset given" in done.stderr and "settings file" in done.stderr


def test_the_cache_keys_are_the_judges_sha256_and_the_datas(tmp_path):
    done = run(tmp_path, "keys", data=str(EXAMPLES), judge="qwen2.5-1.5b")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [f"model={catalogue.spec('qwen2.5-1.5b').sha256[:16]}",
                                   f"data={catalogue.dataset_sha256(EXAMPLES)[:16]}"]
    other = run(tmp_path, "keys", data=str(EXAMPLES), judge="fake").stdout.split()
    assert other[0] != done.stdout.split()[0] and other[1] == done.stdout.split()[1]


# --- action.yml and the GitLab template ----------------------------------------------------------------------------

def script_defaults() -> dict[str, str]:
    """INPUT_X -> the default the script gives it (${INPUT_X:-default}, or ${INPUT_X-default})."""
    return dict(re.findall(r"\$\{(INPUT_[A-Z_]+):?-([^}]*)\}", SCRIPT_TEXT))


def script_inputs() -> set[str]:
    return set(re.findall(r"\bINPUT_[A-Z_]+\b", SCRIPT_TEXT))


def test_action_yml_is_a_composite_action_with_the_steps_it_promises():
    assert ACTION["name"] and ACTION["description"] and ACTION["runs"]["using"] == "composite"
    assert ACTION["inputs"]["data"]["default"] == "" and "required" not in ACTION["inputs"]["data"]
    steps = ACTION["runs"]["steps"]
    for step in steps:
        assert ("uses" in step) != ("run" in step), step
        if "run" in step:
            assert step["shell"] == "bash" and 'ci/run-eval.sh"' in step["run"], step
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses[0] == "actions/setup-python" and "actions/upload-artifact" in uses
    assert {"actions/cache/restore", "actions/cache/save"} <= set(uses)
    evaluate = next(s for s in steps if s.get("id") == "eval")
    later = steps[steps.index(evaluate) + 1:]
    assert later and all(s["if"].startswith("always()") for s in later)  # reports and caches kept on a failed gate
    cached = {s["with"]["path"] for s in steps if s.get("uses", "").startswith("actions/cache/")}
    assert {"${{ inputs.models-dir }}", "${{ inputs.cache-dir }}"} <= cached
    keys = " ".join(s["with"]["key"] for s in steps if s.get("uses", "").startswith("actions/cache/"))
    assert "steps.keys.outputs.model" in keys and "steps.keys.outputs.data" in keys
    assert set(ACTION["outputs"]) == {"exit-code", "gate", "report-dir"}
    assert all(f"{k}=" in SCRIPT_TEXT for k in ACTION["outputs"])  # the script writes each to $GITHUB_OUTPUT


def test_every_input_the_action_declares_is_used():
    """Each input reaches the script as INPUT_<NAME>, which the script reads, or a step's `with:`; and every INPUT_
    variable the script reads is an input of the action, passed to it."""
    steps = ACTION["runs"]["steps"]
    passed = {k: v for s in steps for k, v in (s.get("env") or {}).items()}
    withs = " ".join(str(v) for s in steps for v in (s.get("with") or {}).values())
    for name in ACTION["inputs"]:
        via_script = passed.get(env_name(name)) == f"${{{{ inputs.{name} }}}}" and env_name(name) in script_inputs()
        assert via_script or f"inputs.{name}" in withs, f"input '{name}' is not used"
    declared = {env_name(n) for n in ACTION["inputs"]}
    assert script_inputs() <= declared & set(passed), script_inputs() - (declared & set(passed))


def test_the_action_the_gitlab_template_and_the_script_default_alike():
    defaults = script_defaults()
    variables = GITLAB[".localragas-eval"]["variables"]
    for name, spec in ACTION["inputs"].items():
        if env_name(name) in script_inputs():
            assert env_name(name) in variables, name
            assert str(spec.get("default", "")) == str(variables[env_name(name)]) == defaults.get(env_name(name), ""), \
                name


def test_the_gitlab_template_runs_the_script_and_publishes_the_junit_report():
    job = GITLAB[".localragas-eval"]
    script = "\n".join(job["script"])
    assert all(isinstance(line, str) for line in job["script"])
    assert "ci/run-eval.sh install" in script and script.rstrip().endswith("ci/run-eval.sh eval")
    out = job["variables"]["INPUT_OUTPUT_DIR"]
    assert job["artifacts"]["when"] == "always" and job["artifacts"]["reports"]["junit"] == f"{out}/junit.xml"
    assert f"{out}/" in job["artifacts"]["paths"]
    cached = {p for c in job["cache"] for p in c["paths"]}
    assert {job["variables"]["INPUT_MODELS_DIR"], job["variables"]["INPUT_CACHE_DIR"], ".cache/pip"} <= cached
    assert job["variables"]["PIP_CACHE_DIR"] == "$CI_PROJECT_DIR/.cache/pip"
    assert all(c.get("when") == "always" for c in job["cache"] if ".localragas/cache" in c["paths"])


def test_the_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
