"""docs/ci.md: every YAML block parses into the shape GitHub Actions / GitLab CI expect; flags it names exist; the
one-step examples use the action's and the template's own inputs."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from cli_helpers import cli

yaml = pytest.importorskip("yaml")

DOC = Path(__file__).resolve().parents[3] / "docs" / "ci.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```yaml\n(.*?)```", TEXT, flags=re.S)


def loaded() -> list:
    return [yaml.safe_load(b) for b in BLOCKS]


def github_workflows() -> list[dict]:
    return [d for d in loaded() if isinstance(d, dict) and "jobs" in d]


def github_workflow() -> dict:
    """The long form: the workflow that installs localragas itself."""
    return next(d for d in github_workflows() if "torch==2.13.0" in yaml.safe_dump(d))


def gitlab_jobs() -> dict[str, dict]:
    return {k: v for d in loaded() if isinstance(d, dict) and "jobs" not in d
            for k, v in d.items() if isinstance(v, dict) and "script" in v}


def test_every_yaml_block_parses():
    assert len(BLOCKS) >= 4
    for block, data in zip(BLOCKS, loaded()):
        assert isinstance(data, (dict, list)), block[:80]


def _steps() -> list[dict]:
    steps = [s for wf in github_workflows() for job in wf["jobs"].values() for s in job["steps"]]
    steps += [s for d in loaded() if isinstance(d, list) for s in d]  # the pytest-route step snippets
    return steps


def test_github_steps_are_well_formed():
    for wf in github_workflows():
        assert "on" in wf or True in wf  # YAML 1.1 reads the key `on` as true; GitHub reads it as "on"
    for step in _steps():
        assert isinstance(step, dict)
        assert ("uses" in step) != ("run" in step), step
        if "run" in step:
            assert isinstance(step["run"], str)
        if "with" in step:
            assert all(isinstance(v, (str, bool, int)) for v in step["with"].values()), step


def test_gitlab_scripts_are_strings_and_reports_are_published():
    jobs = gitlab_jobs()
    assert {"rag-quality", "rag-quality-tests"} <= set(jobs)
    for name, job in jobs.items():
        for key in ("script", "after_script"):
            for line in job.get(key, []):
                assert isinstance(line, str), f"{name}.{key}: {line!r} (an unquoted ': ' made it a mapping)"
        assert job["artifacts"]["when"] == "always"
        for cache in job["cache"]:
            assert set(cache) == {"key", "paths"} and all(not p.startswith(("/", "~")) for p in cache["paths"])
    main_job = jobs["rag-quality"]
    assert main_job["artifacts"]["reports"]["junit"] == "junit.xml"
    assert "report.html" in main_job["artifacts"]["paths"]
    cached = {p for c in main_job["cache"] for p in c["paths"]}
    assert {"models", ".cache/pip", ".cache/localragas/wheels", ".localragas/cache"} <= cached
    assert main_job["variables"]["PIP_CACHE_DIR"].startswith("$CI_PROJECT_DIR/")


def _commands() -> list[str]:
    out = [s["run"] for s in _steps() if "run" in s]
    out += [line for job in gitlab_jobs().values() for line in job.get("script", [])]
    return out


def test_torch_cpu_is_installed_first_and_the_eval_writes_every_report():
    for script in (next(s["run"] for s in _steps() if "torch==2.13.0" in s.get("run", "")),
                   "\n".join(gitlab_jobs()["rag-quality"]["script"])):
        assert script.index("torch==2.13.0") < script.index("llama-cpp-python==") < script.index("localragas[")
        assert "download.pytorch.org/whl/cpu" in script
    evals = [c for c in _commands() if c.lstrip().startswith("localragas eval")]
    assert len(evals) == 2
    for cmd in evals:
        args = shlex.split(cmd)
        for flag, value in (("--out", "report.json"), ("--html", "report.html"), ("--junit", "junit.xml"),
                            ("--md", "summary.md")):
            assert args[args.index(flag) + 1] == value


def test_the_cli_flags_the_docs_use_exist():
    help_text = cli("eval", "--help").output
    used = {f for c in _commands() if c.lstrip().startswith("localragas eval") for f in re.findall(r"--[a-z-]+", c)}
    assert used and all(f in help_text for f in used), used


def test_the_plugin_options_the_docs_name_exist():
    source = (Path(__file__).resolve().parents[3] / "localragas" / "pytest_plugin.py").read_text(encoding="utf-8")
    named = set(re.findall(r"--localragas-[a-z-]+", TEXT))
    assert {"--localragas-judge", "--localragas-embedder", "--localragas-judge-option"} <= named
    assert all(f'"{opt}"' in source for opt in named), named
    assert "pytest tests/rag_quality --localragas-judge" in " ".join(TEXT.split())


ROOT = DOC.parents[1]


def test_the_one_step_examples_come_first_and_use_the_actions_and_templates_inputs():
    assert TEXT.index("## GitHub Actions in one step") < TEXT.index("## Without the action") < TEXT.index(
        "## GitHub Actions without the action")
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    example = next(wf for wf in github_workflows() if wf is not github_workflow())
    [step] = [s for job in example["jobs"].values() for s in job["steps"] if s.get("uses", "").endswith(
        "/localragas@main")]
    assert "data" in step["with"] and set(step["with"]) <= set(action["inputs"])
    assert len(next(b for b in BLOCKS if "/localragas@main" in b).strip().splitlines()) <= 12
    template = yaml.safe_load((ROOT / "ci" / "gitlab" / "localragas.gitlab-ci.yml").read_text(encoding="utf-8"))
    [use] = [d for d in loaded() if isinstance(d, dict) and "include" in d]
    assert use["include"][0]["file"] == "ci/gitlab/localragas.gitlab-ci.yml"
    job = next(v for v in use.values() if isinstance(v, dict) and "extends" in v)
    assert job["extends"] in template and set(job["variables"]) <= set(template[job["extends"]]["variables"])
    assert len(next(b for b in BLOCKS if "include:" in b).strip().splitlines()) <= 12
