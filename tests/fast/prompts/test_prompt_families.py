"""A prompt family is one record (prompts/families.py): what the built-in metrics ask is a family of FAMILIES, asked
for the reply model its record states, and the tables about families (the instruction blocks an override replaces,
the window check's smallest sizes, the digest's probe) are that record's."""
from __future__ import annotations

from localragas.judge_calls.window import needed_window
from localragas.data.dataset import load_samples
from localragas.judges.embeddings import HashingEmbedder
from localragas.judges import FakeJudge
from localragas.metrics import all_metrics
from localragas.prompts import FAMILIES, PromptFamily, Prompt
from localragas.prompts.digest import probe
from localragas.prompts.overrides import TEMPLATES
from localragas.run.runner import evaluate

CONFIGURED = [("faithfulness", {"statements": "claims", "question": "both"}),
              ("context_recall", {"verdicts": "json"}), ("context_precision", {"verdicts": "json"}),
              ("context_precision", {"questions": "both"}), ("answer_relevancy", {"questions": "checked"})]


def test_every_call_the_built_in_metrics_make_is_a_family_asked_for_the_reply_its_record_states():
    samples = [*load_samples("examples/rag_samples.jsonl")[0][:3], *load_samples("examples/chat_samples.jsonl")[0]]
    judge = FakeJudge()
    evaluate(samples, judge=judge, metrics=[n for n, m in all_metrics().items() if m.uses_judge], embedder=HashingEmbedder(), judge_check=False)
    for name, options in CONFIGURED:
        evaluate(samples, judge=judge, metrics=[name], metric_options={name: options}, embedder=HashingEmbedder(),
                 judge_check=False)
    asked = {c.prompt.name for c in judge.calls}
    assert {"verify_statement", "contradict_statement", "verify_statements", "judge_chunk", "judge_chunks",
            "question_answerable", "extract_claims", "check_question", "generate_questions", "knowledge_retained",
            "request_addressed"} <= asked
    for call in judge.calls:
        family = FAMILIES[call.prompt.name]
        assert issubclass(call.output, family.reply), (call.prompt.name, call.output, family.reply)


def test_the_family_tables_are_derived_from_the_records():
    assert list(TEMPLATES) == [n for n, f in FAMILIES.items() if f.instructions]
    assert all(TEMPLATES[n] == list(FAMILIES[n].instructions) for n in TEMPLATES)
    judge = FakeJudge()
    for name, family in FAMILIES.items():
        assert isinstance(family, PromptFamily) and family.name == name
        assert all(isinstance(p, Prompt) and p.name == name for lang in ("en", "zh") for p in probe(name, lang))
        if family.smallest is not None:
            make, item, reply = family.smallest
            assert make().name == name
            assert needed_window(judge, name) > item + reply
