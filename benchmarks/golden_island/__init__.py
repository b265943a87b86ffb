"""The Golden Island: studies and tuners (run from the checkout root: python -m benchmarks.golden_island.<module>)."""
