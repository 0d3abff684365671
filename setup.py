"""The one build setting pyproject.toml cannot hold: the C record walker, unless a pure wheel is asked for.

Everything else about the package is in pyproject.toml. The walker (mockbroker/protocol/records/_walk.c)
is optional: where it does not compile, the install goes on and record.py uses the Python walker.
It is built against the limited API of CPython 3.11 (abi3): one binary wheel per platform for every
CPython >= 3.11.

MOCKBROKER_PURE_WHEEL=1 builds without it: the py3-none-any wheel for platforms with no binary wheel
(scripts/release builds both). Not to be confused with MOCKBROKER_PURE_PYTHON=1, which picks the
Python walker at run time.
"""

import os

from setuptools import Extension, setup

PURE = os.environ.get("MOCKBROKER_PURE_WHEEL", "") == "1"

WALKER = Extension(
    "mockbroker.protocol.records._walk",
    sources=["mockbroker/protocol/records/_walk.c"],
    optional=True,
    py_limited_api=True,
    define_macros=[("Py_LIMITED_API", "0x030B0000")],
)

setup(
    ext_modules=[] if PURE else [WALKER],
    options={} if PURE else {"bdist_wheel": {"py_limited_api": "cp311"}},
)
