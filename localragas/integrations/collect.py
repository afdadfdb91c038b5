"""Ask a pipeline every question and keep what it retrieved and answered, as samples: the loop the LangChain and
LlamaIndex integrations share."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from ..core.errors import ConfigError, MissingDependencyError
from ..data.sample_inputs import as_samples
from ..data.schema import Sample, field_names


def require(module: str, extra: str, what: str) -> None:
    """MissingDependencyError naming the pip command when `module` cannot be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(f"{what} needs {module.split('.')[0].replace('_', '-')}: "
                                     f"pip install 'localragas[{extra}]'") from None


def collect_with(ask: Callable[[str], dict[str, Any]], questions: Iterable[str | Mapping[str, Any]]) -> list[Sample]:
    """Samples of each question (a string, or a record whose other fields, e.g. `reference` and `id`, are kept) with
    the answer and contexts `ask` returned. An error the pipeline raises is raised as it is."""
    records = []
    for i, item in enumerate(questions, 1):
        record = {"question": item} if isinstance(item, str) else dict(item) if isinstance(item, Mapping) else None
        names = field_names(record, "question") if record is not None else []
        if not names or not isinstance(record[names[0]], str):
            raise ConfigError(f"questions, item {i}: expected a question (a string) or a record with a 'question', "
                              f"got {type(item).__name__}")
        records.append({**record, **ask(record[names[0]])})
    return cast(list[Sample], as_samples(records))  # records in Python: a SampleList
