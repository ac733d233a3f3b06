"""What a run leaves: the store, summaries of measurements (results), points' keys and
text, statistics, noise, verdicts, comparisons, trends, and the model the views draw from.

Layer data of docs/architecture.md."""
