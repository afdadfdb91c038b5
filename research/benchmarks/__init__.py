"""localragas beside ragas 0.4.3 (speed: vs_ragas; agreement with people: ragas_agreement; both on ragas_harness, with
ragas_child run in its own venv), judge backends against each other (backends) and memory on a large file (memory)."""
