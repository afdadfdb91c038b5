"""The column mapping is followed the same way by every reader: a file (load_samples), rows given in Python
(as_samples: a list, a DataFrame) and labelled rows (load_labelled)."""
from __future__ import annotations

import pandas as pd
import pytest

from localragas.quality.labelled import load_labelled
from localragas.data.column_map import ColumnCheck
from localragas.data.dataset import load_samples
from localragas.core.errors import DatasetError
from localragas.data.sample_inputs import as_samples

from cli_helpers import write_jsonl

LABEL = {"metric": "faithfulness", "kind": "binary", "value": 1}
ROWS = [{"id": f"s{i}", "prompt": f"Question {i}?", "contexts": ["Some context."], "answer": "An answer.",
         "label": LABEL} for i in (1, 2)]


READERS = {
    "file": lambda tmp_path, rows, columns: load_samples(write_jsonl(tmp_path / "d.jsonl", rows), columns=columns)[0],
    "list": lambda tmp_path, rows, columns: as_samples(rows, columns),
    "DataFrame": lambda tmp_path, rows, columns: as_samples(pd.DataFrame(rows), columns),
    "labelled file": lambda tmp_path, rows, columns: [
        r.sample for r in load_labelled(write_jsonl(tmp_path / "d.jsonl", rows), columns=columns)],
    "labelled list": lambda tmp_path, rows, columns: [r.sample for r in load_labelled(rows, columns=columns)],
}


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_reads_a_mapped_column(tmp_path, reader):
    samples = READERS[reader](tmp_path, ROWS, {"question": "prompt"})
    assert [(s.id, s.question) for s in samples] == [("s1", "Question 1?"), ("s2", "Question 2?")]


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_a_mapped_column_the_data_lacks(tmp_path, reader):
    with pytest.raises(DatasetError, match="columns maps 'question' to 'promt', which is not a column "
                                           r"\(the columns: id, prompt, contexts, answer, label\)"):
        READERS[reader](tmp_path, ROWS, {"question": "promt"})


def test_an_optional_mapped_column_is_checked_at_the_end():
    check = ColumnCheck({"reference": "gold"}, "d.jsonl")
    check.see({"question": "q"})  # the first record need not have an optional field's column
    check.see({"question": "q", "gold": "g"})
    check.done()
    late = ColumnCheck({"reference": "gold"}, "d.jsonl")
    late.see({"question": "q"})
    with pytest.raises(DatasetError, match="'reference' to 'gold', which is not a column"):
        late.done()


def test_a_table_is_checked_by_its_column_names_before_any_row():
    with pytest.raises(DatasetError, match="'reference' to 'gold'.*the columns: question, answer"):
        ColumnCheck({"reference": "gold"}, "DataFrame", known=["question", "answer"])
