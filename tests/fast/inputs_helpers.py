"""The rows the Python-input tests score (test_python_inputs.py, test_report_frames.py) and a stand-in for a
datasets.Dataset (test_calibrate_python.py too)."""
from __future__ import annotations

# Three samples: one with a category and a reference, one unsupported answer without a reference, one short answer.
ROWS = [
    {"question": "What colour is the sky?", "contexts": ["The sky is blue.", "Grass is green."],
     "answer": "The sky is blue.", "reference": "The sky is blue.", "category": "nature"},
    {"question": "Where is Paris?", "contexts": ["Paris is in France."], "answer": "Paris is in Spain."},
    {"question": "How many legs has a spider?", "contexts": ["A spider has eight legs."],
     "answer": "Eight.", "reference": "A spider has eight legs."},
]


class FakeHFDataset:
    """What evaluate() reads of a datasets.Dataset: column_names, len, iterating rows as dicts (Arrow gives lists)."""

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.column_names = sorted({k for r in rows for k in r})

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter([{c: r.get(c) for c in self.column_names} for r in self.rows])
