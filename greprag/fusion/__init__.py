"""Pure functions over candidates: re-ranking, deduplication, fusion, packing."""
