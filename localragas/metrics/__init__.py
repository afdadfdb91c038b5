"""RAGAS metrics; one file per metric, each declared on its class and registered there (@register_metric,
registry.py). Importing the package registers every built-in metric."""
from .base import Metric
from .registry import all_metrics, built_in_modules, get_metrics, register_modules

register_modules(built_in_modules())

__all__ = ["Metric", "all_metrics", "get_metrics"]
