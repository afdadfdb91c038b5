"""localragas: offline RAGAS evaluation with a local, grammar-constrained judge."""
__version__ = "0.1.0"

from .dataset import load_samples  # noqa: E402
from .embeddings import get_embedder  # noqa: E402
from .errors import LocalragasError  # noqa: E402
from .judges import get_judge  # noqa: E402
from .runner import evaluate  # noqa: E402
from .schema import MetricResult, Report, Sample, SampleResult  # noqa: E402

__all__ = [
    "LocalragasError", "MetricResult", "Report", "Sample", "SampleResult",
    "evaluate", "get_embedder", "get_judge", "load_samples",
]
