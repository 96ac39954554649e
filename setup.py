"""The optional compiled accelerators; everything else about the package is in pyproject.toml.

Two kinds, both built by Cython and both optional (without a C compiler, or without Cython, the
build goes on and AgentLens runs as pure Python, only slower; see `agentlens/formats/_native.py`):

* twins: a `.pyx` that does what a pure-Python function does, faster; the Python function stays
  the specification and the fallback, and a test holds the two equal;
* copies: a pure-Python module compiled as it is, under the name `<module>_compiled`, so the
  module itself stays importable as plain Python.
"""

from setuptools import Extension, setup

TWINS = ["agentlens.formats._shell_accel", "agentlens.formats._mini_swe_agent_accel"]
COPIES = ["agentlens.formats._openhands_legacy"]


def extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:  # a build without its declared build requirements: pure Python
        print("warning: Cython is not installed; AgentLens is built without its accelerators")
        return []
    modules = [Extension(name, [_source(name, ".pyx")]) for name in TWINS]
    # a copy's type annotations stay Python's: Cython must not turn `float` into a C double
    copies = [Extension(f"{name}_compiled", [_source(name, ".py")]) for name in COPIES]
    built = cythonize(modules, compiler_directives={"language_level": 3}) + cythonize(
        copies, compiler_directives={"language_level": 3, "annotation_typing": False}
    )
    for extension in built:
        extension.optional = True
    return built


def _source(name: str, suffix: str) -> str:
    return f"src/{name.replace('.', '/')}{suffix}"


setup(ext_modules=extensions())
