"""Judge and embedder backends, built-in and plugins', registered one way (judges/registry.py): the built-ins are entry
points listed in code, loaded like a plugin's, and found without reading any installed distribution's metadata (a
source checkout needs no reinstall); a plugin adds an embedder as BACKEND:MODEL as it adds a judge."""
from __future__ import annotations

import json
import textwrap

import pytest

import localragas.core.plugins as plugins
from localragas.core.plugins import PluginError
from localragas.judges import BACKENDS, FakeJudge, get_judge
from localragas.judges.embeddings import HashingEmbedder, get_embedder
from localragas.judges.registry import EMBEDDER_BACKENDS, JUDGE_BACKENDS

from cli_helpers import cli

EMBEDDER_PLUGIN = '''
from localragas.judges.embeddings import HashingEmbedder


def make(model, options):
    embedder = HashingEmbedder(dims=int(model))
    embedder.name = f"plugged-{model}"
    return embedder


def not_an_embedder(model, options):
    return 42


def a_judge(model, options):
    from localragas.judges import FakeJudge

    return FakeJudge(name="from-a-plugin")
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A package `emb_plugin` whose entry points (given) are found on sys.path, as an installed one's are."""
    def install(entry_points: str) -> None:
        site = tmp_path / "site"
        dist = site / "emb_plugin-0.1.dist-info"
        dist.mkdir(parents=True, exist_ok=True)
        (site / "emb_plugin.py").write_text(EMBEDDER_PLUGIN, encoding="utf-8")
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: emb-plugin\nVersion: 0.1\n", encoding="utf-8")
        (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
        monkeypatch.syspath_prepend(str(site))
    return install


def test_the_built_ins_are_entry_points_in_code_loaded_as_a_plugins_are(monkeypatch):
    import localragas.judges.registry as registry

    def no_metadata(group):
        raise AssertionError(f"installed metadata read for {group}")

    monkeypatch.setattr(registry, "found", no_metadata)  # a checkout never installed: no entry points at all
    assert BACKENDS == ("llamacpp", "openai", "transformers", "fake")
    assert {ep.group for ep in JUDGE_BACKENDS.built_in.values()} == {"localragas.judges"}
    assert set(EMBEDDER_BACKENDS.built_in) == {"sentence-transformers", "fake"}
    loaded = []
    monkeypatch.setattr(registry, "load", lambda ep, group, what: loaded.append(ep.name) or plugins.load(ep, group, what))
    assert isinstance(get_judge("fake"), FakeJudge) and isinstance(get_judge("fake:"), FakeJudge)
    assert isinstance(get_embedder("fake"), HashingEmbedder) and isinstance(get_embedder("fake:"), HashingEmbedder)
    assert loaded == ["fake"] * 4  # through the plugins' loader
    with pytest.raises(AssertionError, match="installed metadata read for localragas.judges"):
        get_judge("plugged:x")  # a name no built-in has: the plugins are looked for


def test_a_plugin_cannot_take_a_built_in_name(plugin):
    plugin("[localragas.judges]\nfake = emb_plugin:a_judge\n[localragas.embedders]\nfake = emb_plugin:make\n")
    assert get_judge("fake:x").name == "fake"
    assert type(get_embedder("fake:7")) is HashingEmbedder and get_embedder("fake:7").dims == 512


def test_a_plugins_embedder_is_chosen_as_backend_model(plugin, tmp_path):
    plugin("[localragas.embedders]\nplugged = emb_plugin:make\n")
    embedder = get_embedder("plugged:64")
    assert embedder.name == "plugged-64" and embedder.embed(["a b"]).shape == (1, 64)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "It is blue.", "contexts": ["It is blue."]}) + "\n")
    r = cli("eval", data, "--judge", "fake", "--embedder", "plugged:64", "-m", "answer_relevancy", "--no-cache",
            "--no-resume", "--no-history", "--no-progress", "--out", tmp_path / "r.json")
    assert r.exit_code in (0, 1), r.output
    assert json.loads((tmp_path / "r.json").read_text())["meta"]["embedder"]["name"] == "plugged-64"


def test_a_broken_embedder_plugin_is_an_error_naming_it(plugin, tmp_path):
    plugin("[localragas.embedders]\nbad = emb_plugin:nope\nodd = emb_plugin:not_an_embedder\n")
    with pytest.raises(PluginError, match=r"plugin 'bad = emb_plugin:nope' \(entry point group localragas.embedders "
                                          r"from emb-plugin\) failed to load \(an embedder backend\): AttributeError"):
        get_embedder("bad:x")
    with pytest.raises(PluginError, match="the 'odd' embedder plugin .* made a int, not a localragas Embedder"):
        get_embedder("odd:x")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "Q?", "answer": "A.", "contexts": ["A."]}) + "\n")
    r = cli("eval", data, "--judge", "fake", "--embedder", "bad:x", "--no-cache", "--no-resume", "--no-history")
    assert r.exit_code == 2 and "plugin 'bad = emb_plugin:nope'" in r.output


def test_an_unknown_backend_name_is_read_as_a_name_or_path_as_before():
    with pytest.raises(Exception, match=r"unknown embedder 'nothing:here'; valid: minilm-l6, fake, or a "
                                        r"sentence-transformers folder"):
        get_embedder("nothing:here")
    with pytest.raises(Exception, match=r"unknown judge 'nothing:here'; valid: .* or BACKEND:MODEL with BACKEND in "
                                        r"llamacpp, openai, transformers, fake"):
        get_judge("nothing:here")
