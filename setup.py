"""The optional compiled accelerators; everything else about the package is in pyproject.toml.

Each extension is a Cython twin of a pure-Python function that stays the specification and the
fallback (see `agentlens/formats/_native.py`). `optional=True`: without a C compiler the build
goes on and AgentLens runs as pure Python, only slower.
"""

from setuptools import Extension, setup

ACCELERATORS = ["agentlens.formats._shell_accel", "agentlens.formats._mini_swe_agent_accel"]

setup(
    ext_modules=[
        Extension(name, [f"src/{name.replace('.', '/')}.pyx"], optional=True)
        for name in ACCELERATORS
    ]
)
