"""Builds the Cython engines.  MEEPLELAB_DEBUG=1 builds the checked variant used by the
test suite: Cython bounds checks on and C array indexing trapped by -fsanitize=bounds
(core_cy.engine.contract.BUILD then says "checked").  scripts/test.sh builds it into
build/checked, which only the suite puts on its path; `pip install .` builds the release."""
import os
import platform
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("MEEPLELAB_DEBUG", "") not in ("", "0")
ONLY = {m for m in os.environ.get("MEEPLELAB_MODULES", "").split(",") if m}

directives = {"language_level": 3, "embedsignature": True}
if DEBUG:
    directives.update(boundscheck=True, wraparound=True, cdivision=False, initializedcheck=True)
    cflags = ["-O1", "-g", "-fsanitize=bounds", "-fsanitize-undefined-trap-on-error"]
else:
    # Safe because engines keep every index inside its fixed-size array by construction
    # (the debug build checks exactly that while the property tests play random games).
    directives.update(boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False)
    cflags = ["-O3"]
if platform.machine() in ("x86_64", "AMD64"):
    # x86-64-v2 (every x86-64 CPU since 2009) has POPCNT, which board-mask scoring uses a lot.
    cflags.append("-march=x86-64-v2")

extensions = [
    Extension(
        ".".join(path.with_suffix("").parts),
        [str(path)],
        include_dirs=["core_cy/engine/include", numpy.get_include()],
        extra_compile_args=cflags,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                       ("MEEPLELAB_CHECKED", "1" if DEBUG else "0")],
    )
    for path in sorted(Path("core_cy").rglob("*.pyx"))
    # MEEPLELAB_MODULES=maori,contract rebuilds only those modules in place (a quicker
    # edit-compile loop while working on one engine: a game's name stands for its engine);
    # unset, every engine is built.
    if not ONLY or path.stem in ONLY or path.parent.name in ONLY
]

setup(
    # Compile the engines side by side (one C compiler per core).
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        # Separate build trees so that switching between debug and release regenerates C.
        build_dir="build/cython-debug" if DEBUG else "build/cython-release",
        # Every module is regenerated unless MEEPLELAB_INCREMENTAL=1 (then only what changed:
        # quicker, for a checkout that always builds the same variant in place).
        force=os.environ.get("MEEPLELAB_INCREMENTAL") != "1",
    ),
)
