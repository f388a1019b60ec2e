"""One widget per file; each renders with theme variables only."""
