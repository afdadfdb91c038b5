"""The sample and report models and a metric's definition as data (schema, language, metric_definition);
the readers (files by kind, Python objects), one record as a Sample, the column mapping, ragas names."""
