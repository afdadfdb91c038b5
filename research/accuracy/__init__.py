"""The agreement analyses behind docs/accuracy.md: each reads `localragas calibrate --out` files (results.py) or runs
localragas on the shared benchmarks (calibrate_all), and prints the figures the log records."""
