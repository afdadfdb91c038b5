"""The settings' part of the resume checkpoint's key (run/settings.py KEYED, KEYED_WHEN_SET) names the checkpoint a
run wrote before, so that it resumes: each key below was computed by the code before the key's settings were declared
in order (hand-numbered InKey slots), and must never change. A setting that decides a run's results goes last, in
KEYED_WHEN_SET, so that every checkpoint written without it keeps its name."""
from __future__ import annotations

import pytest

from localragas.run.checkpoint import run_key
from localragas.run.settings import KEYED, KEYED_WHEN_SET, RunSettings, key_parts

KEYS = {  # settings -> run_key("/data/d.jsonl", *key_parts(settings, "FP"), "PROMPTS") as the InKey slots made it
    "defaults": ({}, "17c123e2c81541de578b"),
    "metrics": ({"metrics": ["faithfulness", "answer_relevancy"]}, "cf47bd2facc4041fb529"),
    "embedder and limit": ({"embedder": "fake", "limit": 3}, "6ea49ab27ffd6ef1a843"),
    "skip invalid": ({"skip_invalid": True}, "e72272939b2d51bc0a78"),
    "shard": ({"shard": (2, 4)}, "3e247d89c925f3ae8ce7"),
    "metric options": ({"metric_options": {"faithfulness": {"question": "both"}}}, "20442b45943561412e7b"),
    "columns": ({"columns": {"question": "query"}}, "c0a420b67c2f84a9e066"),
    "every keyed setting": ({"metrics": ["faithfulness"], "embedder": "fake", "limit": 2, "skip_invalid": True,
                             "shard": (1, 3), "metric_options": {"faithfulness": {"question": "both"}},
                             "columns": {"question": "q"}}, "2ab7e31dc741a732fb3c"),
    # none of these decides the results: the defaults' key
    "unkeyed settings only": ({"judge": "fake", "thresholds": {"faithfulness": 0.5}, "concurrency": 2,
                               "language": "en", "tags": ["x"], "engine": "dask", "resume": False},
                              "17c123e2c81541de578b"),
}


@pytest.mark.parametrize("settings, key", KEYS.values(), ids=list(KEYS))
def test_the_checkpoint_key_of_these_settings_is_the_one_written_before(settings, key):
    assert run_key("/data/d.jsonl", *key_parts(RunSettings(**settings), "FP"), "PROMPTS") == key


def test_every_keyed_name_is_a_setting_once():
    named = [*KEYED, *KEYED_WHEN_SET]
    assert len(named) == len(set(named)) and set(named) <= set(RunSettings.model_fields)
