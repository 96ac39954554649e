"""The shipped pages never turn data into markup; they load nothing from another origin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentlens.viewer.app import STATIC

SCRIPTS = sorted(STATIC.glob("*.js"))
MARKUP_SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|srcdoc"
)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_script_writes_markup(script: Path) -> None:
    assert not MARKUP_SINKS.findall(script.read_text())


SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # a name for createElementNS, never fetched


def test_pages_load_only_local_files() -> None:
    for page in [STATIC / "index.html", STATIC / "app.css", *SCRIPTS]:
        text = page.read_text().replace(f'"{SVG_NAMESPACE}"', "")
        assert not re.search(r"https?://|//cdn|@import", text), page.name


def test_every_module_imported_is_shipped() -> None:
    assert {"app.js", "api.js"} <= {script.name for script in SCRIPTS}, STATIC
    for script in SCRIPTS:
        for name in re.findall(r'from "\./([\w.]+)"', script.read_text()):
            assert (STATIC / name).is_file(), f"{script.name} imports missing {name}"
