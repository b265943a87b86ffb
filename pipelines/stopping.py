"""The stop_when rule: is the experiment's question decided with always-valid figures."""
from __future__ import annotations

from pipelines.comparisons import compare
from pipelines.figures import Look
from pipelines.summaries import cell_summary


def decided(path: str, baseline: str | None, look: Look) -> bool:
    """Whether the experiment's question is decided at +-look.delta with always-valid
    figures (the stop_when rule): every comparison with the baseline when there are other
    arms, else every cell's seat balance (competitive games)."""
    if baseline is not None:
        table = compare(path, baseline, look=look)
        if not table.is_empty():
            return bool(table["decided"].all())
    cells = cell_summary(path, look=look)  # decided is null for a cooperative cell
    return bool(len(cells)) and bool(cells["decided"].fill_null(False).all())
