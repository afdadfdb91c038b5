"""Research beside localragas, not part of it: the measurements behind docs/accuracy.md, docs/speed.md and
docs/benchmark.md, and the experiments of docs/research/. Not in the wheel (pyproject.toml packages only
localragas*); it imports localragas, never the other way round. Run from the checkout's root, e.g.

    .venv/bin/python -m research.accuracy.paired_calibration BASE.json NEW.json

- research.benchmarks: speed against ragas and between judge backends, memory, ragas's agreement with people
- research.accuracy: the agreement analyses over `localragas calibrate --out` files
- research.verifier: a verifier head over the judge's own signals (docs/research/verifier.md)
- research.screenshot_report: the HTML report's screenshots in docs/
"""
