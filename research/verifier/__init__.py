"""A verifier head over the judge's own signals (issue 37; docs/research/verifier.md): signals.py records them,
run_all.sh runs it over every dev file, evaluate.py and within_file.py fit and check the heads."""
