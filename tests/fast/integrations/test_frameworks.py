"""A LangChain pipeline evaluated through langchain-core's own in-memory parts, no network: an LCEL chain over an
InMemoryVectorStore with DeterministicFakeEmbedding and a FakeListLLM, asked by integrations.langchain.collect and by
`run-rag --target file.py:chain`; what it returns read by evaluate() (data/framework_outputs.py). LlamaIndex:
test_llamaindex.py."""
from __future__ import annotations

import json
import sys

import pytest

from localragas import as_samples, evaluate
from localragas.core.errors import ConfigError, MissingDependencyError
from localragas.judges.fake import FakeJudge

from cli_helpers import cli, write_jsonl

lc = pytest.importorskip("langchain_core", reason="langchain-core is not installed (pip install 'localragas[test]')")

WARRANTY, RETURNS = "The warranty lasts two years.", "Returns are accepted within 30 days."

LANGCHAIN_PIPELINE = f"""
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
store.add_documents([Document(page_content={WARRANTY!r}, id="warranty"),
                     Document(page_content={RETURNS!r}, id="returns")])
retriever = store.as_retriever(search_kwargs={{"k": 2}})
llm = FakeListLLM(responses=["Two years."])
prompt = PromptTemplate.from_template("Context: {{context}}\\nQuestion: {{question}}")


def join(docs):
    return "\\n".join(d.page_content for d in docs)


# an LCEL chain that returns the answer alone: its documents are seen through the retriever's callback
chain = {{"context": retriever | join, "question": RunnablePassthrough()}} | prompt | llm | StrOutputParser()
# one that returns its documents beside the answer, as create_retrieval_chain does
with_sources = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(
    answer=(lambda x: {{"context": join(x["context"]), "question": x["question"]}}) | prompt | llm)
"""


@pytest.fixture
def pipeline(tmp_path, monkeypatch):
    path = tmp_path / "lc_pipeline.py"
    path.write_text(LANGCHAIN_PIPELINE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lc_pipeline  # noqa: PLC0415

    yield lc_pipeline
    sys.modules.pop("lc_pipeline", None)


def test_collect_asks_a_langchain_chain_and_keeps_its_retrieved_documents(pipeline):
    from localragas.integrations.langchain import collect

    samples = collect(pipeline.chain, ["How long is the warranty?",
                                       {"question": "Can I return it?", "reference": "Within 30 days.", "id": "r1"}])
    assert [s.answer for s in samples] == ["Two years.", "Two years."]
    assert all(sorted(s.contexts) == sorted([WARRANTY, RETURNS]) for s in samples)
    assert all(sorted(s.retrieved_context_ids) == ["returns", "warranty"] for s in samples)
    assert samples[1].reference == "Within 30 days." and samples[1].id == "r1"
    with_sources = collect(pipeline.with_sources, ["How long is the warranty?"])
    assert with_sources[0].contexts == samples[0].contexts and with_sources[0].answer == "Two years."


def test_evaluate_reads_a_chains_output_dict_and_the_judge_sees_its_documents(pipeline):
    output = pipeline.with_sources.invoke("How long is the warranty?")
    assert isinstance(output["context"][0], lc.documents.Document)  # the chain's own Documents, given as they are
    judge = FakeJudge()
    report = evaluate([output], metrics=["faithfulness"], judge=judge, cache=False, gate=False, progress=False)
    assert report.samples[0].metrics["faithfulness"].value is not None
    assert judge.calls and all(WARRANTY in c.prompt.user and RETURNS in c.prompt.user for c in judge.calls)
    [sample] = as_samples([output])
    assert sample.question == "How long is the warranty?" and sample.answer == "Two years."
    # RetrievalQA's keys: query, result, source_documents
    qa = {"query": "Q?", "result": "A.", "source_documents": output["context"]}
    [s] = as_samples([qa])
    assert (s.question, s.answer, s.contexts) == ("Q?", "A.", [d.page_content for d in output["context"]])


def test_a_chain_taking_an_object_is_given_the_question_under_its_key():
    from langchain_core.prompts import PromptTemplate
    from langchain_core.runnables import RunnableLambda

    from localragas.integrations.langchain import collect

    chain = PromptTemplate.from_template("Q: {query}") | RunnableLambda(lambda p: p.to_string())
    [s] = collect(chain, ["How long?"])
    assert s.answer == "Q: How long?" and s.contexts == []  # no retriever inside: no contexts
    two = PromptTemplate.from_template("{topic} / {tone}") | RunnableLambda(lambda p: p.to_string())
    with pytest.raises(ConfigError, match="takes an object with tone, topic: none is the question.*input_key="):
        collect(two, ["x"])
    partial = two.with_config(run_name="two")  # input_key names the key; the chain is asked with it alone
    with pytest.raises(KeyError):
        collect(partial, ["x"], input_key="topic")


def test_a_retriever_alone_and_a_missing_library_are_refused_naming_what_to_do(pipeline, monkeypatch):
    from localragas.integrations.langchain import collect

    with pytest.raises(ConfigError, match="is a retriever: it gives documents but no answer"):
        collect(pipeline.retriever, ["q"])
    with pytest.raises(ConfigError, match="expected a LangChain Runnable, got function"):
        collect(lambda q: q, ["q"])
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(MissingDependencyError, match=r"needs langchain-core: pip install 'localragas\[langchain\]'"):
        collect(pipeline.chain, ["q"])


def test_run_rag_asks_a_langchain_chain_named_by_target(pipeline, tmp_path):
    testset = write_jsonl(tmp_path / "testset.jsonl", [{"id": "a", "question": "How long is the warranty?",
                                                        "reference": "Two years."}])
    filled = tmp_path / "filled.jsonl"
    r = cli("run-rag", testset, "--target", f"{tmp_path / 'lc_pipeline.py'}:chain", "--out", filled, "--no-progress")
    assert r.exit_code == 0 and "1 of 1 rows answered" in r.output, r.output
    [row] = [json.loads(line) for line in filled.read_text().splitlines()]
    assert row["answer"] == "Two years." and sorted(row["contexts"]) == sorted([WARRANTY, RETURNS])
    assert sorted(row["retrieved_context_ids"]) == ["returns", "warranty"] and row["reference"] == "Two years."
