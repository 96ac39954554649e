"""The optional compiled modules; everything else about the package is in pyproject.toml.

The modules listed in `agentlens/compiled.py` are compiled by mypyc as they are, under their own
names. The compilation is optional: without a C compiler, or without mypy, the build goes on and
AgentLens runs as pure Python, only slower.
"""

import runpy
import sys

from setuptools import Extension, setup

COMPILED = runpy.run_path("src/agentlens/compiled.py")["COMPILED"]
# the commands that build code; the others (egg_info, dist_info: metadata) need no mypy run
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def extensions() -> list[Extension]:
    if not BUILDS & set(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without its declared build requirements: pure Python
        print("warning: mypy is not installed; AgentLens is built as pure Python")
        return []
    sources = [f"src/{name.replace('.', '/')}.py" for name in COMPILED]
    try:
        built = mypycify(sources, opt_level="3")
    except (Exception, SystemExit) as error:  # mypy refused the sources: pure Python
        print(f"warning: mypyc failed ({error}); AgentLens is built as pure Python")
        return []
    for extension in built:
        extension.optional = True  # no C compiler: the extension is skipped, the build goes on
    return built


setup(ext_modules=extensions())
