"""pytest plugin: gate RAG quality in your own test suite.

Installed with localragas and loaded by pytest automatically (entry point `pytest11: localragas`; disable with
`-p no:localragas`). Fixtures:

    localragas_judge     the judge (session-scoped; closed at the end of the session)
    localragas_embedder  the embedder for answer relevancy (session-scoped)
    evaluate             `report = evaluate(samples, **kwargs)`: localragas.evaluate with the configured judge,
                         embedder, cache and thresholds; any keyword of localragas.evaluate overrides them

    def test_rag_quality(evaluate):
        report = evaluate(samples)
        assert_gate(report)

Settings, first found wins: command line (`--localragas-judge`, `--localragas-embedder`,
`--localragas-judge-option KEY=VALUE`, `--localragas-cache-dir`, `--localragas-no-cache`,
`--localragas-gate-on`, `--localragas-no-judge-check`), environment (LOCALRAGAS_JUDGE, LOCALRAGAS_EMBEDDER,
LOCALRAGAS_JUDGE_OPTIONS, LOCALRAGAS_CACHE_DIR), ini options (localragas_judge, localragas_embedder,
localragas_judge_options, localragas_cache_dir, localragas_judge_check), the project's localragas.toml /
[tool.localragas] (all its settings: thresholds, metrics, custom metrics, [prompts] overrides, judge_check...; not
its `labels`, which are of one run's items: pass evaluate(..., labels=[...]) in a test instead), the library defaults. Each is a run setting (RunSettings, localragas/run/settings.py), layered as every run layers them
(RunSettings.over): a table such as the judge options merged across layers, the command line winning per key. The
options are the settings' `localragas eval` flags with `--localragas-` (tests/fast/run/test_settings_model.py checks
them against the model rather than this module importing it: it loads in every pytest session).

This module is imported in every pytest session of everyone who has localragas installed: it imports nothing
heavy at module level; judges, embedders and the runner are imported inside the fixtures.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pytest

from .core.number_text import given_text, score_text

if TYPE_CHECKING:
    from .data.schema import Report
    from .run.settings import RunSettings

ENV_JUDGE = "LOCALRAGAS_JUDGE"
ENV_EMBEDDER = "LOCALRAGAS_EMBEDDER"
ENV_JUDGE_OPTIONS = "LOCALRAGAS_JUDGE_OPTIONS"  # whitespace-separated KEY=VALUE items
ENV_CACHE_DIR = "LOCALRAGAS_CACHE_DIR"

_RUNS = pytest.StashKey[list]()  # (nodeid, passed, [(metric, mean, threshold, status)]) per evaluate() call
_USED = pytest.StashKey[dict]()  # what the fixtures actually used: judge, embedder, cache


# --- options ----------------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localragas", "localragas: RAG quality gate fixtures")
    group.addoption("--localragas-judge", metavar="NAME|PATH", default=None,
                    help="judge for the localragas fixtures: a catalogue name (default qwen2.5-1.5b), a .gguf path, "
                         f"'fake' (tests), or BACKEND:MODEL. Env {ENV_JUDGE}; ini localragas_judge.")
    group.addoption("--localragas-embedder", metavar="NAME|PATH", default=None,
                    help="embedder for answer_relevancy: minilm-l6 (default), a sentence-transformers folder, or "
                         f"'fake'. Env {ENV_EMBEDDER}; ini localragas_embedder.")
    group.addoption("--localragas-judge-option", metavar="KEY=VALUE", action="append", default=[],
                    help="judge backend setting, e.g. n_ctx=4096 or n_threads=2; repeatable. "
                         f"Env {ENV_JUDGE_OPTIONS} (space-separated); ini localragas_judge_options.")
    group.addoption("--localragas-cache-dir", metavar="DIR", default=None,
                    help="persistent judge cache (default .localragas/cache, or $LOCALRAGAS_STATE_DIR/cache): "
                         f"a re-run with unchanged samples makes no judge call. Env {ENV_CACHE_DIR}.")
    group.addoption("--localragas-no-cache", action="store_true", default=False,
                    help="neither read nor write the judge cache.")
    group.addoption("--localragas-gate-on", choices=("mean", "lower-bound"), default=None,
                    help="what each metric's threshold is held against: the mean (default) or the lower bound of "
                         "its confidence interval.")
    group.addoption("--localragas-no-judge-check", action="store_true", default=False,
                    help="skip the judge check (obvious items asked before scoring; a judge that cannot tell them "
                         "apart fails the test): for a test setup only. Ini localragas_judge_check = false.")
    parser.addini("localragas_judge", "judge for the localragas fixtures (see --localragas-judge)")
    parser.addini("localragas_embedder", "embedder for the localragas fixtures (see --localragas-embedder)")
    parser.addini("localragas_judge_options", "judge backend settings, KEY=VALUE items", type="args", default=[])
    parser.addini("localragas_cache_dir", "persistent judge cache folder (see --localragas-cache-dir)")
    parser.addini("localragas_judge_check", "false: skip the judge check (see --localragas-no-judge-check)",
                  type="bool", default=None)


def _parse_options(items: Iterable[str], where: str) -> dict[str, Any]:
    from .core.errors import ConfigError  # noqa: PLC0415
    from .core.key_values import parse_options  # noqa: PLC0415

    try:
        return parse_options(items, where)
    except ConfigError as e:
        raise pytest.UsageError(str(e)) from None


def _first(*values: Any) -> Any:
    for v in values:
        if v not in (None, ""):
            return v
    return None


def _explicit(config: pytest.Config) -> dict[str, Any]:
    """Settings given on the command line, in the environment or in the ini file (no project config, no imports)."""
    opt = config.option
    options = {
        **_parse_options(config.getini("localragas_judge_options") or [], "ini localragas_judge_options"),
        **_parse_options(os.environ.get(ENV_JUDGE_OPTIONS, "").split(), ENV_JUDGE_OPTIONS),
        **_parse_options(opt.localragas_judge_option or [], "--localragas-judge-option"),
    }
    return {
        "judge": _first(opt.localragas_judge, os.environ.get(ENV_JUDGE), config.getini("localragas_judge")),
        "embedder": _first(opt.localragas_embedder, os.environ.get(ENV_EMBEDDER),
                           config.getini("localragas_embedder")),
        "judge_options": options,
        "cache_dir": _first(opt.localragas_cache_dir, os.environ.get(ENV_CACHE_DIR),
                            config.getini("localragas_cache_dir")),
        "no_cache": bool(opt.localragas_no_cache),
        "gate_on": opt.localragas_gate_on,
        "judge_check": False if opt.localragas_no_judge_check else _ini_bool(config, "localragas_judge_check"),
    }


def _ini_bool(config: pytest.Config, name: str) -> bool | None:
    """A bool ini option, None when it is not set (older pytest gives [] for an unset one)."""
    value = config.getini(name)
    return value if isinstance(value, bool) else None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RUNS] = []
    config.stash[_USED] = {}
    _explicit(config)  # a malformed KEY=VALUE is a usage error now, not a fixture error later


def pytest_report_header(config: pytest.Config) -> str | None:
    """One line, only when localragas settings were given explicitly (the plugin stays quiet otherwise)."""
    given = _explicit(config)
    shown = [f"{k}={given[k]}" for k in ("judge", "embedder", "cache_dir", "gate_on") if given[k]]
    if given["judge_options"]:
        shown.append("judge_options=" + ",".join(f"{k}={v}" for k, v in given["judge_options"].items()))
    if given["no_cache"]:
        shown.append("no cache")
    if given["judge_check"] is False:
        shown.append("no judge check")
    return f"localragas: {', '.join(shown)}" if shown else None


# --- fixtures ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def localragas_config(pytestconfig: pytest.Config) -> "RunSettings":
    """The resolved settings (see the module docstring for the order): the project's settings file under the ones
    given explicitly, layered as every run layers them (RunSettings.over); its custom metrics registered."""
    from .run.config import find_config, load_settings  # noqa: PLC0415
    from .run.settings import register_custom_metrics  # noqa: PLC0415

    given = _explicit(pytestconfig)
    project = load_settings(find_config(Path(pytestconfig.rootpath)))  # else ./localragas.toml, else none
    register_custom_metrics(project)
    # not its `labels`: people's labels are of one run's items, and every evaluate() of a test suite is another run
    # (they would be refused as another run's labels); a test passes evaluate(..., labels=[...]) for its own run
    project = project.model_copy(update={"labels": []})
    return project.over({
        "judge": given["judge"], "embedder": given["embedder"], "judge_options": given["judge_options"],
        "cache_dir": Path(given["cache_dir"]).expanduser() if given["cache_dir"] and not given["no_cache"] else None,
        "cache": False if given["no_cache"] else None, "gate_on": given["gate_on"],
        "judge_check": given["judge_check"]}, "localragas pytest options")


@pytest.fixture(scope="session")
def localragas_judge(localragas_config: "RunSettings", pytestconfig: pytest.Config):
    """The judge (a model loads on its first uncached call), closed at the end of the session. Each `evaluate` run
    asks it through its own judging context (the session's cache, prompts and calibration): it is never changed."""
    from .judges import get_judge  # noqa: PLC0415

    cfg = localragas_config
    judge = get_judge(cfg.judge, dict(cfg.judge_options))
    used = pytestconfig.stash[_USED]
    folder = cfg.cache_folder()
    used.update(judge=judge.name, cache=str(folder) if folder else None,
                stats={"calls": 0, "cache_hits": 0})  # its runs' (_count)
    try:
        yield judge
    finally:
        judge.close()


@pytest.fixture(scope="session")
def localragas_embedder(localragas_config: "RunSettings", pytestconfig: pytest.Config):
    """The embedder for answer relevancy (the model loads on first use)."""
    from .judges.embeddings import get_embedder  # noqa: PLC0415

    embedder = get_embedder(localragas_config.embedder)
    pytestconfig.stash[_USED]["embedder"] = embedder.name
    return embedder


@pytest.fixture
def evaluate(request: pytest.FixtureRequest, localragas_config: "RunSettings",
             localragas_judge) -> Callable[..., "Report"]:
    """`evaluate(samples, **kwargs) -> Report`: localragas.evaluate with the session's judge, embedder and settings.

    samples: anything localragas.evaluate takes (Sample objects, dicts with localragas, ragas or deepeval field
    names, a pandas DataFrame, a datasets.Dataset, a ragas EvaluationDataset, a file path). kwargs: any keyword of
    localragas.evaluate (metrics, thresholds, gate, gate_on, judge, embedder, columns, prompts, ...), over the
    session's settings as evaluate() layers them (a table such as thresholds or prompts merged key by key). The
    session judge is asked with the calibration of the session's judge options.
    """
    from .judges.calibrated import run_options  # noqa: PLC0415
    from .run.runner import evaluate as run  # noqa: PLC0415

    cfg = localragas_config

    def _evaluate(samples: Any, **kwargs: Any) -> "Report":
        if kwargs.setdefault("judge", localragas_judge) is localragas_judge:  # built with the session's options:
            kwargs["judge_options"] = {**run_options(cfg.judge_options), **(kwargs.get("judge_options") or {})}
        metrics = kwargs.get("metrics") or cfg.metrics
        options = {**cfg.metric_options, **(kwargs.get("metric_options") or {})}
        if kwargs.get("embedder") is None and _needs_embedder(metrics, options):
            kwargs["embedder"] = request.getfixturevalue("localragas_embedder")
        report = run(samples, cfg, **kwargs)  # the session's settings, the keywords over them
        if kwargs["judge"] is localragas_judge:
            _count(request.config.stash[_USED], report)
        _record(request, report)
        return report

    return _evaluate


def _needs_embedder(metrics: list[str] | None, options: dict[str, dict] | None = None) -> bool:
    """Does a metric, with its options (e.g. answer_relevancy), need the embedder?"""
    from .metrics import get_metrics  # noqa: PLC0415

    return any(m.uses_embedder for m in get_metrics(metrics, options))


def _count(used: dict, report: "Report") -> None:
    """Add a run's judge calls and cache hits (its scoring's, its judge check's and its canaries') to the session's, for
    the summary."""
    stats = used["stats"]
    for part in (report.meta.get(k) or {} for k in ("judge_stats", "judge_check", "canaries")):
        for k in ("calls", "cache_hits"):
            stats[k] += int(part.get(k, 0) or 0)


def _record(request: pytest.FixtureRequest, report: "Report") -> None:
    """Gate results as JUnit properties of the test, and a line for the terminal summary."""
    rows = [(r.metric, r.mean, r.threshold, r.status) for r in report.gate.results]
    for metric, mean, threshold, status in rows:
        request.node.user_properties.append((f"localragas.{metric}", score_text(mean, digits=4, missing="n/a")))
        request.node.user_properties.append((f"localragas.{metric}.threshold", given_text(threshold)))
        request.node.user_properties.append((f"localragas.{metric}.status", status))
    request.config.stash[_RUNS].append((request.node.nodeid, report.gate.passed, rows, len(report.samples)))


# --- terminal summary -------------------------------------------------------------------------------------------


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    runs = config.stash.get(_RUNS, [])
    used = config.stash.get(_USED, {})
    if not runs and not used.get("judge"):
        return
    tr = terminalreporter
    tr.section("localragas")
    stats = used.get("stats") or {}
    what = [f"judge {used.get('judge', '-')}", f"embedder {used.get('embedder', '-')}"]
    if stats:
        what.append(f"{stats.get('calls', 0)} judge call(s), {stats.get('cache_hits', 0)} from the cache")
    what.append(f"cache {used['cache']}" if used.get("cache") else "no cache")
    tr.write_line("; ".join(what))
    for nodeid, passed, rows, n in runs:
        metrics = ", ".join(_row_text(*row) for row in rows) or "no gate"
        tr.write_line(f"{'PASSED' if passed else 'FAILED'} {nodeid} ({n} samples): {metrics}")


def _row_text(metric: str, mean: float | None, threshold: float, status: str) -> str:
    if status == "error":
        return f"{metric} could not be evaluated (errors)"
    if mean is None:
        return f"{metric} not evaluated"
    return f"{metric} {score_text(mean)} {'<' if status == 'failed' else '>='} {given_text(threshold)}"
