"""Report writers: terminal table, JSON, CSV. Files are written atomically (temporary file, then rename)."""
from .csv_report import write_csv
from .json_report import read_json, write_json
from .terminal import print_report

__all__ = ["print_report", "read_json", "write_csv", "write_json"]
