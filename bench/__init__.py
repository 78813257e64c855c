"""GrepRAG benchmark harness: corpora, tasks, baselines, metrics and reports (not shipped)."""
