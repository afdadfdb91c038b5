"""Test sets: documents read and chunked, the generation run (`localragas generate`), the user's RAG
pipeline and the run over a test set (`localragas run-rag`)."""
