"""Plugins: a package's `localragas.metrics` and `localragas.judges` entry points (a dist-info on sys.path, as an
installed package has) add a metric usable by name and a judge backend usable as BACKEND:MODEL; a broken one is an
error naming its entry point, never a run without it."""
from __future__ import annotations

import json
import textwrap

import pytest

import localragas
from localragas.judges import FakeJudge, get_judge
from localragas.metrics import all_metrics, registry
from localragas.core.plugins import PluginError

from cli_helpers import cli

PLUGIN = '''
import localragas
from localragas.judges import FakeJudge

cites = localragas.Criterion(name="cites_sources", question="Does the answer cite its sources?",
                             fields=["answer", "contexts"], threshold=0.3)


@localragas.metric(name="shouting", needs=("answer",))
def shouting(ctx):
    return 1.0 if ctx.sample.answer.isupper() else 0.0


def make_judge(target, options):
    judge = FakeJudge(name=f"plugged-{target}", record=False)
    judge.options = options
    return judge


def not_a_judge(target, options):
    return "a string"
'''


def install(tmp_path, monkeypatch, entry_points: str, module: str = PLUGIN):
    """A package `my_plugin` with these entry points, found on sys.path; the metric plugins loaded anew."""
    site = tmp_path / "site"
    dist = site / "my_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "my_plugin.py").write_text(textwrap.dedent(module), encoding="utf-8")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(registry._plugins, "state", "new")
    monkeypatch.delitem(__import__("sys").modules, "my_plugin", raising=False)


@pytest.fixture(autouse=True)
def fresh(own_metrics, monkeypatch):
    yield
    registry._plugins["state"] = "new"  # the next test finds the entry points it has (none)


def test_a_plugins_metrics_are_registered_and_scored_by_name(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, """
        [localragas.metrics]
        cites_sources = my_plugin:cites
        shouting = my_plugin:shouting
        """)
    known = all_metrics()
    assert known["cites_sources"].source == "plugin my_plugin:cites"
    assert known["shouting"].source == "plugin my_plugin:shouting"
    report = localragas.evaluate([{"question": "Q?", "answer": "IT IS BLUE.", "contexts": ["It is blue."]}],
                                 metrics=["cites_sources", "shouting"], judge=FakeJudge(), cache=False, progress=False)
    assert report.samples[0].metrics["shouting"].value == 1.0
    assert report.samples[0].metrics["cites_sources"].evidence["judged"][0]["criterion"].startswith("Does the answer")
    assert report.gate.results[0].threshold == 0.3


def test_localragas_metrics_marks_a_plugins_metric(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "[localragas.metrics]\ncites_sources = my_plugin:cites\n")
    monkeypatch.chdir(tmp_path)
    r = cli("metrics")
    assert r.exit_code == 0, r.output
    assert "custom (plugin my_plugin:cites)" in r.output


def test_a_plugins_judge_backend_is_chosen_as_backend_model(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "[localragas.judges]\nplugged = my_plugin:make_judge\n")
    judge = get_judge("plugged:tiny", {"temperature": 0})
    assert judge.name == "plugged-tiny" and judge.options == {"temperature": 0}
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "It is blue.", "contexts": ["It is blue."]}) + "\n")
    r = cli("eval", data, "--judge", "plugged:tiny", "-m", "faithfulness", "--no-cache", "--no-resume", "--no-progress",
            "--out", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "r.json").read_text())["meta"]["judge"]["name"] == "plugged-tiny"


@pytest.mark.parametrize("entry, message", [
    ("[localragas.metrics]\nbroken = no_such_module:thing\n",
     "plugin 'broken = no_such_module:thing' (entry point group localragas.metrics from my-plugin) failed to load "
     "(a metric): ModuleNotFoundError"),
    ("[localragas.metrics]\nwrong = my_plugin:make_judge\n", "is a function, not a localragas Metric"),
])
def test_a_broken_metric_plugin_stops_with_an_error_naming_it(tmp_path, monkeypatch, entry, message):
    install(tmp_path, monkeypatch, entry)
    with pytest.raises(PluginError) as e:
        all_metrics()
    assert message in str(e.value)
    with pytest.raises(PluginError):  # every time: never a run without it
        all_metrics()
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "A.", "contexts": ["A."]}) + "\n")
    r = cli("eval", data, "--judge", "fake", "--embedder", "fake", "--no-cache", "--no-resume")
    assert r.exit_code == 2 and message.split(" (")[0] in r.output


def test_a_broken_judge_plugin_is_an_error_naming_it(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "[localragas.judges]\nbad = my_plugin:nope\nodd = my_plugin:not_a_judge\n")
    with pytest.raises(PluginError, match=r"plugin 'bad = my_plugin:nope' \(entry point group localragas.judges"):
        get_judge("bad:x")
    with pytest.raises(PluginError, match="the 'odd' judge plugin .* made a str, not a localragas Judge"):
        get_judge("odd:x")
