"""Property-based tests (hypothesis): the loaders never fail with anything but DatasetError, any schema-valid judge
reply gives a MetricResult in [0, 1] or unscored, any reply at all leaves the run going, and neutralised data cannot
close its tag or carry a chat-template token."""
from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localragas.data.dataset import load_samples
from localragas.judges.embeddings import HashingEmbedder
from localragas.core.errors import DatasetError
from localragas.judges import FakeJudge, Judging
from localragas.metrics import all_metrics
from localragas.core.reply_schemas import (MAX_CLAIM_CHARS, MAX_CLAIMS, MAX_QUESTION_CHARS, N_QUESTIONS, Claims,
                                           GeneratedQuestions, YesNo)
from localragas.prompts.base import _SPECIAL_TOKEN, TAGS, neutralise, tagged
from localragas.run.scoring import score_sample
from localragas.data.sample_record import KNOWN_FIELDS
from localragas.data.schema import Sample
from localragas.judge_calls.sample_context import Scoring

CORE = [all_metrics()[n] for n in ("faithfulness", "answer_relevancy", "context_precision", "context_recall")]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- the loaders ---------------------------------------------------------------------------------------------------

odd = st.sampled_from(["\ud800", "\udfff", "\x00", "\u202e", "\ufeff", "\r", "\u2028", "𝔘", "天"])
text = st.text(alphabet=st.one_of(st.characters(codec=None), odd), max_size=30)  # surrogates, NUL, RTL, emoji…
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), text)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(text, inner, max_size=3)), max_leaves=8)
field_names = st.one_of(st.sampled_from(sorted(KNOWN_FIELDS)), text)
good_rows = st.fixed_dictionaries({"question": text, "contexts": st.lists(text, max_size=3), "answer": text},
                                  optional={"id": st.one_of(text, st.integers()), "reference": st.one_of(st.none(), text)})
rows = st.one_of(good_rows, st.dictionaries(field_names, values, max_size=7), values,
                 good_rows.flatmap(lambda r: st.dictionaries(field_names, values, max_size=3).map(lambda x: {**r, **x})))


def _csv(records: list) -> bytes:
    header = sorted({k for r in records if isinstance(r, dict) for k in r} | {"question", "contexts", "answer"})
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    for r in records:
        r = r if isinstance(r, dict) else {}
        w.writerow(["" if r.get(h) is None else (json.dumps(r[h]) if not isinstance(r[h], str) else r[h])
                    for h in header])
    return buf.getvalue().encode("utf-8", "surrogatepass")


def _load(name: str, data: bytes, skip: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        try:
            samples, skipped = load_samples(p, skip_invalid=skip)
        except DatasetError as e:
            assert e.path == str(p) and str(e).startswith(str(p))
            return
        assert samples and all(isinstance(s, Sample) for s in samples)
        for s in samples:  # a loaded sample can be written anywhere: every text is valid Unicode
            s.model_dump_json().encode("utf-8")


@FAST
@given(records=st.lists(rows, min_size=1, max_size=5), skip=st.booleans(), fmt=st.sampled_from(["jsonl", "json", "csv"]))
def test_any_json_ish_rows_load_or_raise_dataset_error(records, skip, fmt):
    if fmt == "jsonl":
        data = "\n".join(json.dumps(r) for r in records).encode()
    elif fmt == "json":
        data = json.dumps(records, indent=1).encode()
    else:
        data = _csv(records)
    _load(f"d.{fmt}", data, skip)


@FAST
@given(data=st.binary(max_size=300), name=st.sampled_from(["b.jsonl", "b.json", "b.csv"]), skip=st.booleans())
def test_any_bytes_load_or_raise_dataset_error(data, name, skip):
    _load(name, data, skip)


@FAST
@given(records=st.lists(good_rows, min_size=1, max_size=4), cut=st.integers(min_value=1, max_value=400))
def test_a_file_cut_anywhere_loads_or_raises_dataset_error(records, cut):
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8", "surrogatepass")
    _load("cut.jsonl", data[:cut], False)
    _load("cut.json", json.dumps(records).encode()[:cut], True)


# --- judge replies -> results ----------------------------------------------------------------------------------------

short = st.text(max_size=60)
samples = st.builds(
    Sample, id=st.just("s"), question=st.text(min_size=1, max_size=80), contexts=st.lists(short, max_size=4),
    answer=st.text(max_size=120), reference=st.one_of(st.none(), st.text(max_size=80)))


def valid_reply(data, output: type) -> dict:
    """A reply the grammar would allow for `output`: any claims, any flags, any questions, yes/no per item."""
    if output is Claims:
        return {"claims": data.draw(st.lists(st.text(max_size=MAX_CLAIM_CHARS), max_size=MAX_CLAIMS))}
    if output is GeneratedQuestions:
        q = st.text(min_size=1, max_size=MAX_QUESTION_CHARS)
        return {"noncommittal": data.draw(st.booleans()),
                "questions": data.draw(st.lists(q, min_size=N_QUESTIONS, max_size=N_QUESTIONS))}
    if output is YesNo:
        return {"p_yes": data.draw(st.floats(0, 1)), "mass": data.draw(st.floats(0, 1))}
    n = output.model_json_schema()["properties"]["verdicts"]["maxItems"]
    return {"verdicts": [{"id": i, "verdict": data.draw(st.sampled_from(["yes", "no"]))} for i in range(1, n + 1)]}


@FAST
@given(sample=samples, data=st.data(), n_ctx=st.sampled_from([None, 1024, 8192]))
def test_any_schema_valid_reply_gives_a_result_in_0_1_or_unscored(sample, data, n_ctx):
    judging = Judging(FakeJudge(responder=lambda prompt, output: valid_reply(data, output), n_ctx=n_ctx))
    for metric in CORE:
        r = metric.score(Scoring(sample, judging, HashingEmbedder()))
        if r.value is None:
            assert r.unscored in {"no_claims", "no_reference", "no_contexts"}
        else:
            assert 0.0 <= r.value <= 1.0
    assert judging.stats.failed_calls == 0 and judging.stats.parse_failures == 0


@FAST
@given(sample=samples, replies=st.lists(st.one_of(st.text(max_size=80), st.builds(json.dumps, values)), max_size=6))
def test_any_reply_at_all_leaves_the_sample_scored_or_unscored_never_raising(sample, replies):
    judge = FakeJudge(replies=list(replies))
    result = score_sample(sample, CORE, judge, HashingEmbedder())
    assert list(result.metrics) == [m.name for m in CORE]
    for r in result.metrics.values():
        assert (r.value is None) != (r.unscored is None)
        assert r.value is None or 0.0 <= r.value <= 1.0
        assert not (r.unscored or "").startswith("error:"), r.unscored  # bad replies are judge errors, not bugs


# --- neutralised data ------------------------------------------------------------------------------------------------

tricky = st.text(alphabet=st.sampled_from(list("<>|/[]sSINTYcontexaswerqulimdf _\n\x00｜")) , max_size=60)


@settings(max_examples=200, deadline=None)
@given(body=st.one_of(tricky, st.text(max_size=60)), tag=st.sampled_from(TAGS))
def test_neutralised_data_cannot_close_its_tag_or_carry_a_special_token(body, tag):
    out = neutralise(body)
    assert neutralise(out) == out
    assert _SPECIAL_TOKEN.search(out) is None
    assert "\x00" not in out
    wrapped = tagged(tag, body, id=1)
    lowered = wrapped.lower()
    for t in TAGS:
        assert lowered.count(f"<{t}") == (1 if t == tag else 0)
        assert lowered.count(f"</{t}") == (1 if t == tag else 0)
