"""Fetch the public AgentLens-Bench release into the user cache (used by `agentlens demo`).

The release is the `agentlens-bench/` folder of `shayandaneshvar/agentlens-app` at commit
`7dcd9e3` (spec-process-scoring.md §14.3-14.5). GitHub serves it only as a zip of the whole
repository, so the zip is streamed to a temporary file (size checked against Content-Length when
the server sends one), only the dataset folder is extracted (member paths are checked, so a
hostile archive cannot write outside the cache), one pinned member is checked by SHA-256 and the
number of trajectories is counted. The extracted folder is moved into place only when all of that
passed, so an interrupted download never leaves a half dataset behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import httpx

from agentlens.errors import AgentLensError

COMMIT = "7dcd9e3b1d1970117752fd58fd45bf22543a6f9b"
Progress = Callable[[int, int | None], None]
"""Called with (bytes received so far, total bytes or None)."""


class DownloadError(AgentLensError):
    """The release could not be downloaded or did not pass its checks."""


@dataclass(frozen=True)
class Release:
    url: str
    name: str
    folder: str = "agentlens-bench"
    keep: tuple[str, ...] = ("trajectories/", "ground_truth/", "annotations/", "README.md")
    checksums: dict[str, str] = field(default_factory=dict)
    trajectories: int | None = None


AGENTLENS_BENCH = Release(
    url=f"https://codeload.github.com/shayandaneshvar/agentlens-app/zip/{COMMIT}",
    name=f"agentlens-bench-{COMMIT[:7]}",
    checksums={
        "annotations/trajectories.csv": (
            "6cfddb6a0c5ad82cbf4c96bddd42fb441a6b7bb30490c136687a98b7651c8dfe"
        )
    },
    trajectories=1815,
)


def cache_dir() -> Path:
    """`$AGENTLENS_CACHE`, else `$XDG_CACHE_HOME/agentlens`, else `~/.cache/agentlens`."""
    if os.environ.get("AGENTLENS_CACHE"):
        return Path(os.environ["AGENTLENS_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentlens"


def ensure_release(
    release: Release = AGENTLENS_BENCH,
    *,
    cache: Path | None = None,
    progress: Progress | None = None,
    timeout: float = 60.0,
) -> Path:
    """Return the extracted dataset folder, downloading it first when it is not cached yet."""
    target = (cache or cache_dir()) / release.name
    if (target / ".complete").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        archive = Path(tmp) / "release.zip"
        _download(release.url, archive, progress, timeout)
        staged = Path(tmp) / "extracted"
        _extract(archive, release, staged)
        _verify(staged, release)
        (staged / ".complete").write_text(release.url + "\n")
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target


def _download(url: str, dest: Path, progress: Progress | None, timeout: float) -> None:
    received = 0
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=timeout) as response:
            response.raise_for_status()
            length = response.headers.get("content-length")
            total = int(length) if length and length.isdigit() else None
            with dest.open("wb") as handle:
                for chunk in response.iter_bytes(1 << 20):
                    handle.write(chunk)
                    received += len(chunk)
                    if progress is not None:
                        progress(received, total)
    except httpx.HTTPError as exc:
        raise DownloadError(
            f"cannot download {url}: {exc}; pass --data DIR to use a local copy"
        ) from exc
    if total is not None and received != total:
        raise DownloadError(f"{url}: received {received} of {total} bytes; try again")


def _extract(archive: Path, release: Release, staged: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                relative = _member_path(info.filename, release)
                if relative is None or info.is_dir():
                    continue
                out = staged / relative
                out.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(info) as source, out.open("wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
    except zipfile.BadZipFile as exc:
        raise DownloadError(f"{release.url}: the download is not a valid zip ({exc})") from exc


def _member_path(name: str, release: Release) -> PurePosixPath | None:
    """The member's path inside the dataset folder, or None to skip it (or if it is unsafe)."""
    parts = PurePosixPath(name).parts
    if release.folder not in parts[:2] or ".." in parts or name.startswith("/"):
        return None
    rest = parts[parts.index(release.folder) + 1 :]
    if not rest:
        return None
    inner = PurePosixPath(*rest)
    text = inner.as_posix()
    return inner if any(text.startswith(k) or text == k for k in release.keep) else None


def _verify(staged: Path, release: Release) -> None:
    for member, expected in release.checksums.items():
        path = staged / member
        if not path.is_file():
            raise DownloadError(f"{release.url}: {member} is missing from the archive")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != expected:
            raise DownloadError(
                f"{release.url}: {member} has SHA-256 {digest}, expected {expected}"
            )
    if release.trajectories is not None:
        found = sum(1 for _ in (staged / "trajectories").glob("*/*.json"))
        if found != release.trajectories:
            raise DownloadError(
                f"{release.url}: {found} trajectories extracted, expected {release.trajectories}"
            )
