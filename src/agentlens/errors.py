"""One user-facing error family. The CLI prints an `AgentLensError` as one line, no traceback
(unless `--debug`); anything else is a bug and is shown in full."""

from __future__ import annotations

from pathlib import Path

from agentlens.os_names import printable

_debug = False


def set_debug(on: bool) -> None:
    """The process-wide `--debug` switch, set by the CLI for each command (threads share it)."""
    global _debug
    _debug = on


def debug() -> bool:
    """Whether the command runs with `--debug`: tracebacks, and the tools' own diagnostics (Ray's
    reports of its components) that otherwise stand beside our one line."""
    return _debug


class AgentLensError(Exception):
    """Base of every error caused by input or usage, not by a bug in AgentLens."""


class TraceError(AgentLensError):
    """A trace file could not be read. Names the file, the (attempted) format and the reason."""

    def __init__(self, path: str | Path, reason: str, format: str | None = None) -> None:
        self.path = printable(str(path))
        self.format = format
        self.reason = _redacted(reason)
        fmt = f" [{format}]" if format else ""
        super().__init__(f"{self.path}{fmt}: {self.reason}")


def _redacted(reason: str) -> str:
    """A reason may quote the file (`found 'sk-proj-...'`): it is printed and logged, so it
    gets the redaction every trajectory gets."""
    from agentlens import redaction

    return redaction.masked(reason)


class UnknownFormatError(TraceError):
    """No reader recognises the file. `telltale` says what makes it look like a trace all the
    same (`a "messages" key`), so a folder walk reports it instead of passing it over."""

    telltale: str | None = None


class SchemaError(TraceError):
    """The file parses but does not have the shape its format requires."""


class ConfigError(AgentLensError):
    """A configuration value, option or file is invalid."""


class MissingDependencyError(AgentLensError):
    """An optional extra is needed; the message names the pip command that installs it."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the '{module}' package: pip install 'agentlens[{extra}]'"
        )
        self.extra = extra


class ProviderError(AgentLensError):
    """A language-model call failed for good (after retries); names the provider and the cause."""

    def __init__(self, provider: str, reason: str, *, status: int | None = None) -> None:
        self.provider = provider
        self.reason = reason
        self.status = status
        super().__init__(f"{provider}: {reason}")


class CapabilityError(ProviderError):
    """The provider cannot do what was asked (e.g. log-probs from Anthropic); names an alternative."""


class BudgetExceededError(AgentLensError):
    """The run's dollar or token budget is spent; work stops and says what was not done."""

    def __init__(self, message: str, *, spent: float, limit: float, unit: str) -> None:
        self.spent = spent
        self.limit = limit
        self.unit = unit
        super().__init__(message)


class StoreError(AgentLensError):
    """The results store cannot be opened or does not hold what was asked; names the store."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"store {url}: {reason}")
