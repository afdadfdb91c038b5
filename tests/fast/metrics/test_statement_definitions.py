"""Faithfulness and context recall declare their share and their items; the definition's graded note and the
renderer's verdict tags are made from them in one place (metrics/statement_support.py)."""
from __future__ import annotations

from localragas.metrics import all_metrics


def test_the_definition_and_renderer_are_made_from_the_share_and_the_items():
    f, r = (all_metrics()[n].describe() for n in ("faithfulness", "context_recall"))
    assert f.definition == ("share of the answer's statements (its sentences by default; the judge's claims with "
                            "statements=claims) that the retrieved contexts support (by default graded: the mean of "
                            "the judge's P(yes) per statement)")
    assert r.definition == ("share of the reference answer's statements that can be attributed to the retrieved "
                            "contexts (by default graded: the mean of the judge's P(yes) per statement)")
    assert f.renderer == {"kind": "verdicts", "keys": ["claims"], "items": "claims", "text": "claim",
                          "flag": "supported", "yes": "supported", "no": "not supported"}
    assert r.renderer["yes"] == "attributed" and r.renderer["no"] == "not attributed"
