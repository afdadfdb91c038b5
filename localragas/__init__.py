"""localragas: offline RAGAS evaluation with a local, grammar-constrained judge.

The public names are imported on first use (PEP 562), so `import localragas` is cheap: the pytest plugin
(localragas.pytest_plugin) loads in every pytest session of everyone who has localragas installed.
"""
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .core.lazy_exports import lazy_exports as _lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Criterion": "metrics.custom",
    "Rubric": "metrics.custom",
    "metric": "metrics.custom",
    "GenerateSpec": "testset.generation",
    "LocalragasError": "core.errors",
    "MetricResult": "data.schema",
    "RagRunSpec": "testset.rag_run",
    "Report": "data.schema",
    "RunSettings": "run.settings",
    "RunSpec": "run.evaluation",
    "Sample": "data.schema",
    "SampleResult": "data.schema",
    "as_samples": "data.sample_inputs",
    "assert_gate": "testing",
    "calibrate": "quality.calibration",
    "evaluate": "run.runner",
    "generate_testset": "testset.generation",
    "get_embedder": "judges.embeddings",
    "get_judge": "judges",
    "load_samples": "data.dataset",
    "load_settings": "run.config",
    "run_eval": "run.evaluation",
    "run_rag": "testset.rag_run",
    "spec_from_flags": "run.evaluation",
}

__all__ = sorted(_EXPORTS)

if _TYPE_CHECKING:
    from .quality.calibration import calibrate
    from .data.dataset import load_samples
    from .judges.embeddings import get_embedder
    from .core.errors import LocalragasError
    from .judges import get_judge
    from .metrics.custom import Criterion, Rubric, metric
    from .run.config import load_settings
    from .run.evaluation import RunSpec, run_eval, spec_from_flags
    from .run.settings import RunSettings
    from .run.runner import evaluate
    from .testset.generation import GenerateSpec, generate_testset
    from .testset.rag_run import RagRunSpec, run_rag
    from .data.sample_inputs import as_samples
    from .data.schema import MetricResult, Report, Sample, SampleResult
    from .testing import assert_gate


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, "__version__")
