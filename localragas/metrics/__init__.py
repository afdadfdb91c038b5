"""RAGAS metrics; one file per metric, registered in registry.py."""
from .base import Metric
from .registry import all_metrics, get_metrics

__all__ = ["Metric", "all_metrics", "get_metrics"]
