"""A corrupt or unreadable judge cache never turns a failing gate into a pass: refused when opened (quick_check, schema),
and a read error mid-run stops the run (CacheError, exit 2) instead of leaving samples unscored."""
from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from localragas.core.errors import CacheError
from localragas.judges import FakeJudge
from localragas.judges.cache import DB_NAME, JudgeCache
from localragas.run.runner import evaluate
from localragas.data.schema import Sample

from cli_helpers import cli, write_jsonl

FAST = ["--judge", "fake", "--embedder", "fake", "--no-progress"]


def failing_data(tmp_path: Path) -> Path:
    """Answers the contexts do not support: the gate fails (exit 1) on a good cache."""
    rows = [{"id": f"s{i}", "question": f"What colour is item {i}?", "contexts": [f"Item {i} is painted bright red."],
             "answer": f"Item {i} is blue and made of steel in Paris.", "reference": f"Item {i} is bright red."}
            for i in range(6)]
    return write_jsonl(tmp_path / "d.jsonl", rows)


@pytest.fixture
def warm(tmp_path):
    """A dataset whose gate fails, and a cache folder a first run filled (exit 1)."""
    data, cc = failing_data(tmp_path), tmp_path / "cc"
    r = cli("eval", data, *FAST, "--cache-dir", cc)
    assert r.exit_code == 1, r.output
    assert (cc / DB_NAME).stat().st_size > 12288
    return data, cc


def check_refused(r, cc: Path):
    assert r.exit_code == 2, r.output
    assert str(cc / DB_NAME) in r.output
    assert "localragas cache clear" in r.output and "--no-cache" in r.output
    assert "Traceback" not in r.output and "PASSED" not in r.output


def test_corrupt_pages_are_refused_when_the_cache_is_opened(warm):
    data, cc = warm
    db = cc / DB_NAME
    raw = bytearray(db.read_bytes())
    rng = random.Random(15)
    raw[12288:] = bytes(rng.randrange(256) for _ in range(len(raw) - 12288))
    db.write_bytes(bytes(raw))
    r = cli("eval", data, *FAST, "--cache-dir", cc)
    check_refused(r, cc)
    assert "corrupt" in r.output
    assert cli("eval", data, *FAST, "--no-cache").exit_code == 1  # the advertised way round it


def test_a_corrupt_header_is_refused(warm):
    data, cc = warm
    with open(cc / DB_NAME, "r+b") as f:
        f.write(b"this is no sqlite header at all")
    r = cli("eval", data, *FAST, "--cache-dir", cc)
    check_refused(r, cc)
    assert cli("cache", "info", "--cache-dir", cc).exit_code == 2


def test_cache_clear_removes_a_cache_too_corrupt_to_open(warm):
    data, cc = warm
    (cc / DB_NAME).write_bytes(b"\0" * 5000)
    r = cli("cache", "clear", "--cache-dir", cc)
    assert r.exit_code == 0, r.output
    assert "removed the unreadable cache" in r.output and not (cc / DB_NAME).exists()
    assert cli("eval", data, *FAST, "--cache-dir", cc).exit_code == 1


def test_corrupt_embedding_blobs_are_refused(warm):
    data, cc = warm
    with sqlite3.connect(cc / DB_NAME) as db:
        assert db.execute("update embeddings set vector=x'0000'").rowcount > 0
    r = cli("eval", data, *FAST, "--cache-dir", cc, "-m", "answer_relevancy")
    check_refused(r, cc)
    assert "corrupt embedding" in r.output


def test_an_embedding_that_is_not_a_unit_vector_is_refused(warm):
    data, cc = warm
    with sqlite3.connect(cc / DB_NAME) as db:
        db.execute("update embeddings set vector=x'0000004000000040'")  # (2.0, 2.0): whole floats, wrong length
    r = cli("eval", data, *FAST, "--cache-dir", cc, "-m", "answer_relevancy")
    check_refused(r, cc)


@pytest.mark.parametrize("sql, refusal", [
    ("create table replies (key text, something text)", "not a localragas judge cache"),  # another schema
    ("pragma user_version = 99", "schema version 99"),  # a newer version
])
def test_another_schema_or_a_newer_version_is_refused(tmp_path, sql, refusal):
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute(sql)
    with pytest.raises(CacheError, match=refusal):
        JudgeCache(tmp_path)


def test_a_new_cache_records_its_schema_version_and_an_old_one_is_kept(tmp_path):
    JudgeCache(tmp_path / "new").close()
    with sqlite3.connect(tmp_path / "new" / DB_NAME) as db:
        assert db.execute("pragma user_version").fetchone()[0] == 1
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / DB_NAME) as db:  # a cache from before the version was recorded
        db.execute("create table embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
    JudgeCache(old).close()


def test_a_read_error_mid_run_stops_the_run(tmp_path, monkeypatch):
    judge = FakeJudge()
    calls = {"n": 0}
    opened = JudgeCache.__init__

    def flaky_once_open(cache, folder=None):  # the cache the run opens, its reads failing from the third
        opened(cache, folder)
        real = cache._db

        class Flaky:
            def execute(self, sql, *args):
                calls["n"] += sql.startswith("SELECT")
                if calls["n"] > 2:  # the third read
                    raise sqlite3.DatabaseError("database disk image is malformed")
                return real.execute(sql, *args)

            def close(self):
                real.close()

        cache._db = Flaky()

    monkeypatch.setattr(JudgeCache, "__init__", flaky_once_open)
    samples = [Sample(id=f"s{i}", question="Q?", contexts=["Paris is in France."], answer="Paris is in France.")
               for i in range(3)]
    with pytest.raises(CacheError, match="could not be read.*malformed"):
        evaluate(samples, metrics=["faithfulness"], judge=judge, cache_dir=tmp_path / "cc")


def test_the_cli_maps_a_mid_run_cache_error_to_exit_2(tmp_path, monkeypatch):
    data = failing_data(tmp_path)

    def broken_get(self, key):
        raise self.error("could not be read (DatabaseError: database disk image is malformed)")

    monkeypatch.setattr(JudgeCache, "get", broken_get)
    r = cli("eval", data, *FAST, "--cache-dir", tmp_path / "cc")
    assert r.exit_code == 2, r.output
    assert "malformed" in r.output and "Traceback" not in r.output
