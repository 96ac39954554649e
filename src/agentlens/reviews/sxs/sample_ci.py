"""SxS with N samples per order (`sxs --samples N`): the judge's sampling variance carried into a
95% CI of the mean score (the permutation test's input, score/5 per paired difference).

A cell's score is the mean of its orders' means, x = (Σ_o x̄_o) / m over its m scored orders,
so Var(x) = Σ_o (v_o / k_o) / m² (v_o the unbiased variance of order o's k_o scored samples, /25
for the /5 scale). A paired difference is one cell (`repeat`) or the mean of a task's scored
cells (`task-mean`): Var(d) = Σ_c Var(x_c) / n_d². The mean over G differences has
Var = Σ_d Var(d) / G², and the CI is mean ± 1.96·√Var. Samples of one call are independent; an
order with fewer than two scored samples has no variance and is counted, not guessed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentlens.list_text import counted
from agentlens.reviews.judge.samples import SampleSummary, normal_ci, summarize_samples
from agentlens.reviews.sxs.pairing import pair_task

if TYPE_CHECKING:
    from agentlens.reviews.sxs.cell import Cell


@dataclass(frozen=True)
class SampleCi:
    mean: float
    variance: float
    differences: int
    orders_without_variance: int
    agreement: SampleSummary

    @property
    def ci(self) -> tuple[float, float]:
        return normal_ci(self.mean, self.variance)

    @property
    def reason(self) -> str:
        low, high = self.ci
        missing = (
            f"; {counted(self.orders_without_variance, 'order')} with < 2 scored samples add no variance"
            if self.orders_without_variance
            else ""
        )
        return (
            f"judge sampling: Var(mean) = Σ Var(d) / G² over G = {self.differences} paired "
            f"differences = {self.variance:.4g}; 95% CI {self.mean:+.4f} ± 1.96 × "
            f"{self.variance**0.5:.3g} = [{low:+.4f}, {high:+.4f}]{missing}"
        )

    def to_dict(self) -> dict[str, Any]:
        low, high = self.ci
        return {
            "variance_of_mean": round(self.variance, 6),
            "ci95": [round(low, 4), round(high, 4)],
            "reason": self.reason,
            **self.agreement.to_dict(),
        }


def sample_ci(cells: Sequence[Cell], pairing: str, mean: float) -> SampleCi | None:
    """The CI of `mean` (the flags' mean score) from the cells' samples; None without samples."""
    sampled = [c for c in cells if c.samples and c.score is not None]
    if not sampled:
        return None
    groups: dict[str, list[float]] = {}
    missing = 0
    for cell in sampled:
        variance, lacking = _cell_variance(cell)
        missing += lacking
        key = cell.task if pairing == "repeat" else pair_task(cell.task)
        groups.setdefault(key, []).append(variance)
    per_difference = [sum(vs) / len(vs) ** 2 for vs in groups.values()]
    variance = sum(per_difference) / len(per_difference) ** 2
    orders = [s for c in cells for s in c.samples]
    return SampleCi(mean, variance, len(per_difference), missing, summarize_samples(orders))


def _cell_variance(cell: Cell) -> tuple[float, int]:
    """Var of the cell's score on the /5 scale, and how many scored orders had no variance."""
    scored = [s for s in cell.samples if s.mean is not None]
    total, missing = 0.0, 0
    for order in scored:
        if order.variance is None:
            missing += 1
        else:
            total += order.variance / len(order.kept) / 25
    return total / len(scored) ** 2, missing
