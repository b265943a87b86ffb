"""Forbidden Desert: studies and tuners (run from the checkout root: python -m benchmarks.forbidden_desert.<module>)."""
