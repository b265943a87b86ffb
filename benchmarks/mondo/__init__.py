"""Mondo: studies and tuners (run from the checkout root: python -m benchmarks.mondo.<module>)."""
