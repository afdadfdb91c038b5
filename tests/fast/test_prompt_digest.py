"""The built-in prompts' digest for the resume checkpoints' keys (prompts/digest.py): stable from call to call, changed
by a changed built-in prompt of a family the run asks (in either language), and every built-in family rendered."""
from __future__ import annotations

import pytest

from localragas.asking.generation import FAMILIES
from localragas.asking.statements import STATEMENT_MODES
from localragas.asking.verdicts import VERDICTS
from localragas.asking.ways import WAY_OPTIONS
from localragas.asking.window import _SMALLEST
from localragas.core.errors import ConfigError
from localragas.metrics.answer_relevancy import QUESTION_MODES
from localragas.metrics.registry import BUILT_IN
from localragas.prompts import verdicts
from localragas.prompts.digest import probe, prompts_digest


def changed(monkeypatch, texts: dict, lang: str = "en") -> None:
    """A built-in prompt's text in `lang` changed, as an upgrade might change it."""
    monkeypatch.setitem(texts, lang, texts[lang] + "\nBe careful.")


# --- the digest -------------------------------------------------------------------------------------------------------


def test_the_digest_is_short_stable_and_ignores_order_and_repeats():
    one = prompts_digest(["verify_statement", "extract_claims"])
    assert len(one) == 12 and int(one, 16) >= 0
    assert one == prompts_digest(["extract_claims", "verify_statement", "extract_claims"])
    assert one != prompts_digest(["verify_statement"]) != prompts_digest(["verify_statement_3shot"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_changed_prompt_changes_the_digest_of_the_families_that_ask_it_only(monkeypatch, lang):
    before = prompts_digest(["verify_statement"]), prompts_digest(["extract_claims"])
    changed(monkeypatch, verdicts.ONE, lang)
    assert prompts_digest(["verify_statement"]) != before[0]
    assert prompts_digest(["extract_claims"]) == before[1]


def test_every_family_a_built_in_metric_or_generate_asks_is_rendered_on_the_probe_in_both_languages():
    choices = {"verdicts": VERDICTS, "statements": STATEMENT_MODES, "questions": QUESTION_MODES, **WAY_OPTIONS}
    configured = [m.with_options(shots=3, question="both", phrasings=2) for m in BUILT_IN if "shots" in m.options]
    for m in BUILT_IN:
        for option in m.options:
            for value in choices.get(option, ()):
                try:
                    configured.append(m.with_options(**{option: value}))
                except ConfigError:
                    pass  # e.g. a way of asking with verdicts=json
    asked = {p for m in (*BUILT_IN, *configured) for p in m.prompts}
    assert {"verify_statement_3shot", "contradict_statement_3shot", "verify_statements", "check_question"} <= asked
    for family in {*asked, *_SMALLEST, *FAMILIES}:
        for lang in ("en", "zh"):
            got = probe(family, lang)
            assert got and all(p.name == family for p in got), (family, lang)
    assert probe("criterion:tone", "en") is None  # a custom metric's family: its name alone
