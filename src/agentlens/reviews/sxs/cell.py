"""One task × dimension of a side-by-side run: the pair's scores in both orders (or their samples)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentlens.reviews.judge.samples import ItemSamples
from agentlens.reviews.sxs.mapping import PitfallScore
from agentlens.reviews.sxs.parse import ParsedComparison


@dataclass
class Cell:
    task: str
    dimension: str
    forward: int | None
    swapped: int | None  # already oriented A-vs-B (sign flipped back)
    pitfalls: PitfallScore | None = None
    comparisons: list[ParsedComparison] = field(default_factory=list)
    trajectories: tuple[str, str] = ("", "")  # ids of the pair: run A's, run B's
    samples: tuple[ItemSamples, ...] = ()
    """With N > 1 samples: per order (forward, then swapped), the N oriented scores."""

    @property
    def score(self) -> float | None:
        """The mean of the available orders (each order's mean over its scored samples)."""
        kept = [m for m in self.order_means if m is not None]
        return sum(kept) / len(kept) if kept else None

    @property
    def order_means(self) -> list[float | None]:
        if self.samples:
            return [s.mean for s in self.samples]
        return [None if s is None else float(s) for s in (self.forward, self.swapped)]

    @property
    def consistent(self) -> bool | None:
        if self.forward is None or self.swapped is None:
            return None
        return _sign(self.forward) == _sign(self.swapped)


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)
