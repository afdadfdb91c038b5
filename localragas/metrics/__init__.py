"""RAGAS metrics; one file per metric, registered in base.py."""
from .base import Metric, all_metrics, get_metrics

__all__ = ["Metric", "all_metrics", "get_metrics"]
