"""A metric is declared once, on its class in its own module (name, needs, direction, options, default, order), and
registered there with @register_metric: the built-in modules are every module of localragas/metrics/ but the helpers,
so a new metric is one new module and no list to edit; a plugin's metric and a user's go through the same
register_metric."""
from __future__ import annotations

import json
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import localragas.metrics
from localragas.core import plugins
from localragas.core.errors import ConfigError
from localragas.metrics import all_metrics, get_metrics, registry
from localragas.metrics.registry import built_in_modules, default_metric_names, register_metric, register_modules

from cli_helpers import cli, sample_rows, write_jsonl

CORE = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]

# A metric module as a newcomer writes one: everything the registry and the reports know of it is on its class.
MODULE = '''
from localragas.data.schema import MetricResult
from localragas.metrics.base import Metric
from localragas.metrics.registry import register_metric


@register_metric
class Shouting(Metric):
    name = "shouting"
    needs = ("answer",)
    higher_is_better = False
    default = True
    order = 25  # between answer_relevancy (20) and context_precision (30)
    uses_judge = False
    definition = "share of the answer's letters in upper case"
    problem = "answers shout"

    def measure(self, ctx):
        letters = [c for c in ctx.sample.answer if c.isalpha()]
        return MetricResult.of(sum(c.isupper() for c in letters) / len(letters))
'''


@pytest.fixture
def shouting_module(tmp_path, monkeypatch, own_metrics):
    """The module `shouting_metric` on sys.path, not imported yet (the registry restored after the test)."""
    (tmp_path / "shouting_metric.py").write_text(textwrap.dedent(MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "shouting_metric", raising=False)
    yield "shouting_metric"


def test_the_built_in_modules_are_the_folders_modules_and_each_declares_its_metrics_there():
    folder = Path(localragas.metrics.__file__).parent
    helpers = {"__init__", *registry._HELPERS}
    files = sorted(p.stem for p in folder.glob("*.py") if p.stem not in helpers)
    assert built_in_modules() == [f"localragas.metrics.{f}" for f in files]  # no list of metrics to edit
    built_in = {n: m for n, m in all_metrics().items() if m.source is None}
    assert {type(m).__module__ for m in built_in.values()} == set(built_in_modules())  # each registers a metric
    assert list(built_in)[:4] == CORE == default_metric_names() == [m.name for m in get_metrics()]
    orders = [m.order for m in built_in.values()]
    assert None not in orders and orders == sorted(set(orders))  # each has its own place, listed in that order
    assert [n for n, m in built_in.items() if not m.higher_is_better] == ["noise_sensitivity_relevant",
                                                                            "noise_sensitivity_irrelevant"]


def test_two_built_in_metrics_of_one_name_are_refused(own_metrics):
    twin = type("Twin", (type(all_metrics()["faithfulness"]),), {"__module__": "localragas.metrics.twin"})
    with pytest.raises(ConfigError, match="two built-in metrics are named 'faithfulness': Faithfulness and Twin"):
        register_metric(twin)
    assert type(all_metrics()["faithfulness"]).__name__ == "Faithfulness"


def test_a_new_metric_module_registers_with_its_declared_order_default_and_direction(shouting_module, tmp_path):
    register_modules([shouting_module])  # what the metrics package does with each built-in module
    assert list(all_metrics())[:5] == ["faithfulness", "answer_relevancy", "shouting", "context_precision",
                                       "context_recall"]
    assert default_metric_names() == ["faithfulness", "answer_relevancy", "shouting", "context_precision",
                                      "context_recall"]
    listed = cli("metrics").output.splitlines()
    assert listed[4].startswith("shouting") and "default; lower is better; needs answer" in listed[4]
    rows = [{**row, "answer": row["answer"].upper()} for row in sample_rows()]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "r.json"
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume", "--no-progress",
            "-t", "shouting=0.5", "--out", out)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["metrics"] == ["faithfulness", "answer_relevancy", "shouting", "context_precision",
                                 "context_recall"]  # computed with no -m: in the default set
    assert report["definitions"]["shouting"]["higher_is_better"] is False
    gated = {g["metric"]: g for g in report["gate"]["results"]}["shouting"]
    assert gated["status"] == "failed" and gated["message"] == "shouting 1.000 > 0.50 (lower is better): answers shout"
    assert r.exit_code == 1


def test_a_plugins_decorated_class_registers_once_as_the_plugins(shouting_module, monkeypatch):
    ep = EntryPoint(name="shouting", value=f"{shouting_module}:Shouting", group=plugins.METRICS)
    monkeypatch.setattr(plugins, "found", lambda group: {"shouting": ep} if group == plugins.METRICS else {})
    monkeypatch.setitem(registry._plugins, "state", "new")
    known = all_metrics()
    assert known["shouting"].source == "plugin shouting_metric:Shouting"  # not taken for a built-in
    assert list(known).index("shouting") == 2
