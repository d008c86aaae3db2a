"""numba's cache of compiled kernels is dropped when any kernel source changes
(``solver._drop_stale_cache``): a kernel inlines what it calls from other files, so a cached
kernel is stale when one of them changed. Every file with a kernel must be in the stamp and
among the modules whose caches are dropped, or an upgrade could run a kernel compiled from
older code."""

from __future__ import annotations

import re
from pathlib import Path

from xpbd_addon.core import solver

CORE = Path(solver.__file__).parent


def _kernel_files() -> set[str]:
    found = set()
    for path in CORE.rglob("*.py"):
        if re.search(r"^@(parallel_)?kernel\b", path.read_text(), re.M):
            found.add(path.relative_to(CORE).as_posix())
    return found


def test_every_kernel_source_stamps_the_cache():
    assert _kernel_files() <= set(solver._KERNEL_SOURCES)  # (and what they read: jit, layout)


def test_every_kernel_module_has_its_stale_cache_dropped(monkeypatch):
    dropped: list = []
    monkeypatch.setattr(solver, "_kernels", None)
    monkeypatch.setattr(solver, "_drop_stale_cache", lambda modules: dropped.extend(modules))
    solver.kernels()
    names = {Path(module.__file__).relative_to(CORE).as_posix() for module in dropped}
    assert names == _kernel_files()
