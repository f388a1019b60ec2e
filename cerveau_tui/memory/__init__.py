"""Turn close and memory: what a finished turn taught, distilled, curated and stored."""
