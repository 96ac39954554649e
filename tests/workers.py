"""Which tests share a pytest-xdist worker (`make test` runs two workers, `--dist loadgroup`).

Each group's tests run one after another in one worker, beside the other worker's tests:
- `ray`: tests that start a local Ray. The session's Ray (seconds to start, hundreds of MB)
  starts in one worker, not in each, and the tests that time a stop or count what a Ray left
  behind do not share the two cores with a second Ray.
- `local-model`: tests of the real local model. One llama.cpp server, of one thread under a
  worker (`tests.llm.server_threads`), serves them all. Spreading them over both workers a
  module at a time (a server in each) took as long (676 s against 665 s): one is enough.
Without xdist the markers are inert.
"""

from __future__ import annotations

import pytest

RAY_FIXTURES = {"ray_session", "ray_engine", "ray_head"}
RAY_MODULES = {
    "tests/engine/test_map.py",
    "tests/engine/test_ray_faults.py",
    "tests/engine/test_ray_sigterm.py",
    "tests/engine/test_scoring.py",
    "tests/scenarios/test_scale_out.py",
}
LOCAL_MODEL_FIXTURES = {"local_llm_url", "local_gguf_path"}


def worker_group(item: pytest.Item) -> str | None:
    """The group a test runs in, or None to go to whichever worker is free. Ray wins over the
    local model: a test needing both may start a second server, never a second Ray."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & RAY_FIXTURES or item.nodeid.split("::")[0] in RAY_MODULES:
        return "ray"
    if fixtures & LOCAL_MODEL_FIXTURES or item.get_closest_marker("llm"):
        return "local-model"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if group := worker_group(item):
            item.add_marker(pytest.mark.xdist_group(group))
