"""Labelled rows and calibration files for the tests of calibrate, the calibration map and calibrated runs."""
from __future__ import annotations

import json

from localragas.judges.calibration_map import FORMAT

CTX = "The Eiffel Tower is in Paris. It was completed in 1889 for the World's Fair."
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()


def faith_row(i: int, answer: str, value: int, **extra) -> dict:
    """A faithfulness-labelled row (id f<i>) of an answer about the Eiffel Tower against CTX."""
    return {"id": f"f{i}", "question": "Where is the Eiffel Tower?", "contexts": [CTX], "answer": answer,
            "reference": None, "label": {"metric": "faithfulness", "value": value, "kind": "binary"},
            "source": "hand-written", "meta": {"n": i}, **extra}


def pair_rows(pair: str, better_answer: str, worse_answer: str) -> list[dict]:
    """The two rows of an answer-relevancy pair: the worse answer (-a) and the better one (-b)."""
    base = {"question": f"Question {pair}: what is the capital of France?", "contexts": [], "reference": None,
            "label": {"metric": "answer_relevancy", "kind": "pairwise"}, "pair": pair}
    return [{**base, "id": f"{pair}-a", "answer": worse_answer, "better": False,
             "label": {**base["label"], "value": 0}},
            {**base, "id": f"{pair}-b", "answer": better_answer, "better": True,
             "label": {**base["label"], "value": 1}}]


def overlap_row(i: int, shared: int, label: int, metric: str = "faithfulness", answer: str | None = None) -> dict:
    """One claim (the answer's one sentence of ten words) against a context holding `shared` of its words: the fake
    judge's P(yes) is 0.8 * shared / 10 (judges/fake.py)."""
    context = " ".join(WORDS[:shared]) + " zulu yankee xray."
    return {"id": f"r{i}", "question": "What?", "answer": answer or " ".join(WORDS) + ".", "contexts": [context],
            "label": {"metric": metric, "kind": "binary", "value": label}}


def overlap_rows(n: int = 40, metric: str = "faithfulness") -> list[dict]:
    """n rows sharing 1-5 words in turn, labelled 1 from 3 shared words: both classes well over the fit's minimum."""
    return [overlap_row(i, 1 + i % 5, int(1 + i % 5 >= 3), metric) for i in range(n)]


def calibration_file(path, a=2.0, b=-1.0, family="verify_statement", **more) -> str:
    """A calibration file at path: family's map a, b (and the other families in `more`), for the fake judge."""
    families = {family: {"a": a, "b": b, "fitted_on": {"items": 40, "positives": 20, "source": "test"}}, **more}
    path.write_text(json.dumps({"format": FORMAT, "judge": {"name": "fake"}, "families": families,
                                "created": "2026-01-01T00:00:00+00:00"}), encoding="utf-8")
    return str(path)
