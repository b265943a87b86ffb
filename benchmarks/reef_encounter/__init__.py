"""Reef Encounter: studies and tuners (run from the checkout root: python -m benchmarks.reef_encounter.<module>)."""
