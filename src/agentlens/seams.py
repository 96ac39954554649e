"""The few seams of AgentLens, each a small Protocol. Implementations live one per file in the
package named after the seam (`formats/`, `process/`, `providers/`, `scenarios/agents/`, `store/`,
`engine/`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, runtime_checkable

from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.engine.outcome import Outcome
    from agentlens.providers.types import ChatRequest, ChatResponse, Message, OptionLogprobs
    from agentlens.scenarios.turns import AgentTurn
    from agentlens.store.model import Record, Run

T = TypeVar("T")
R = TypeVar("R")


@runtime_checkable
class TraceReader(Protocol):
    """Reads one source format. Detection asks `handles_location` and `handles_bytes` in turn."""

    name: ClassVar[str]

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        """True when the file name alone is consistent with this format (cheap, no I/O)."""
        ...

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        """True when the first bytes (up to 64 KiB) look like this format."""
        ...

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        """Yield every trajectory in the file; raise `TraceError` subclasses on bad input."""
        ...


@runtime_checkable
class Provider(Protocol):
    """A language model behind one backend (`agentlens.providers`): chat and option log-probs.

    `name` is the full model string, e.g. "openai-compatible:http://127.0.0.1:8011/v1#smollm2-135m";
    it never contains a key. A provider without log-probs has `supports_logprobs = False` and its
    `option_logprobs` raises `agentlens.errors.CapabilityError`.
    """

    name: str
    supports_logprobs: bool

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """One chat completion."""
        ...

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        """Log-probability of each label as the next token after the prompt; label variants
        like "A" / " A" merged (logsumexp); a label absent from a top-k list gets `floor`."""
        ...


@runtime_checkable
class ScenarioAgent(Protocol):
    """An agent under test in a scenario run (`agentlens.scenarios.agents`): it works in one
    folder and answers one user message per call, keeping its own conversation across calls.

    `turn` fills `into` as it goes, so the steps of a turn cut short by a timeout are kept; it
    raises on failure (the run ends with "agent error"). The caller enforces timeouts by
    cancelling it, so an implementation must kill whatever it started when cancelled.
    """

    name: str
    model: str | None

    async def turn(self, message: str, workdir: Path, into: AgentTurn) -> None:
        """Do what the user asked; append each step to `into.steps`, set `into.reply`."""
        ...

    async def aclose(self) -> None:
        """Release model clients and processes; called once the dialog ends, before the checks,
        and again by the run (it must do nothing the second time)."""
        ...


@runtime_checkable
class Store(Protocol):
    """The results store (`agentlens.store`): SQLite by default, Postgres for teams.

    Trajectories are stored content-addressed, each step keyed by the hash of its content and its
    parent's key, so shared prefixes (a system prompt, a task message, a resumed run) are kept once.
    """

    url: str

    def save(self, run: Run, trajectories: Sequence[Trajectory], records: Sequence[Record]) -> str:
        """Store the trajectories (deduplicated) and the run with its records, in one transaction;
        returns the run id. Each record's `trajectory` is the digest `digest(t)` of one of them."""
        ...

    def runs(self, *, kind: str | None = None, limit: int | None = None) -> list[Run]:
        """Runs, newest first."""
        ...

    def records(self, run_id: str) -> list[Record]:
        """A run's records in the order they were saved; a run id prefix is enough when unique."""
        ...

    def trajectory(self, digest: str) -> Trajectory:
        """The trajectory with this digest (or unique digest prefix), exactly as saved."""
        ...


@runtime_checkable
class Engine(Protocol):
    """Runs a batch of independent CPU-bound work units (`agentlens.engine`): in process, in a
    local process pool or on Ray. `workers` is how many units can run at once."""

    name: str
    workers: int

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_done: Callable[[Outcome[Any]], None] | None = None,
        chunksize: int | None = None,
    ) -> list[Outcome[R]]:
        """`fn` on every item, sent to workers `chunksize` items at a time (default: about four
        chunks per worker); one `Outcome` per item in input order, an item's exception kept in
        its `Outcome.error`. `on_done` is called in this process as each item's outcome arrives."""
        ...

    def close(self) -> None:
        """Stop the workers this engine started (also on leaving a `with` block)."""
        ...

    def __enter__(self) -> Engine: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
