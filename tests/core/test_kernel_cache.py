"""numba's cache of compiled kernels is dropped when any kernel source changes
(``core.kernel_cache``): a kernel inlines what it calls from other files, so a cached kernel
is stale when one of them changed. Every file with a kernel must be in the stamp and in a
checked folder, the check must run before any kernel can load, and it must drop the stale
kernels of the Python that runs it even where another Python already stamped the folder, or
an upgrade (or a second Blender version) could run a kernel compiled from older code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from xpbd_addon.core import kernel_cache

CORE = kernel_cache.CORE
OTHER_PYTHON = "py39" if kernel_cache.PYTHON_TAG != "py39" else "py38"


def _kernel_files() -> set[str]:
    found = set()
    for path in CORE.rglob("*.py"):
        if re.search(r"^@(parallel_|inline_)?kernel\b", path.read_text(), re.M):
            found.add(path.relative_to(CORE).as_posix())
    return found


def test_every_kernel_source_stamps_the_cache_and_its_folder_is_checked():
    files = _kernel_files()
    assert files <= set(kernel_cache.KERNEL_SOURCES)  # (and what they read: jit, layout)
    assert {name.split("/")[0] for name in files} == set(kernel_cache.KERNEL_FOLDERS)


def test_every_kernel_module_checks_the_cache_before_defining_a_kernel():
    # The check runs when jit is imported; a kernel module that compiled its kernels
    # another way would load them unchecked.
    for name in _kernel_files():
        text = (CORE / name).read_text()
        assert "from ..jit import" in text, name
        assert "njit(" not in text and "@jit" not in text, name


def _cache(tmp_path: Path, python: str, *, stamp: str | None) -> Path:
    """A cache folder holding one kernel's index and data for ``python`` and a stamp."""
    folder = tmp_path / "solve_cache"
    folder.mkdir(exist_ok=True)
    (folder / f"kernels.step-10.{python}.nbi").write_bytes(b"index")
    (folder / f"kernels.step-10.{python}.1.nbc").write_bytes(b"code")
    if stamp is not None:
        (folder / kernel_cache.stamp_name(python)).write_text(stamp)
    return folder


def _kernels_of(folder: Path, python: str) -> list[Path]:
    return list(folder.glob(f"*.{python}.nbi")) + list(folder.glob(f"*.{python}.*.nbc"))


def test_a_changed_source_drops_this_pythons_kernels_and_only_them(tmp_path):
    this, other = kernel_cache.PYTHON_TAG, OTHER_PYTHON
    folder = _cache(tmp_path, this, stamp="old sources")
    _cache(tmp_path, other, stamp="old sources")
    assert kernel_cache.drop_stale(folder, "new sources")
    assert not _kernels_of(folder, this)
    assert (folder / kernel_cache.KERNEL_STAMP).read_text() == "new sources"
    # The other Python's kernels stay: it drops its own when it runs.
    assert len(_kernels_of(folder, other)) == 2


def test_another_python_run_first_does_not_keep_this_pythons_stale_kernels(tmp_path):
    # The failure this guards against: after a change, Blender 5.0 (Python 3.11) runs first
    # and stamps the folder; Blender 5.3 (Python 3.13) must still drop its own old kernels.
    this, other = kernel_cache.PYTHON_TAG, OTHER_PYTHON
    folder = _cache(tmp_path, this, stamp="old sources")
    _cache(tmp_path, other, stamp="old sources")
    assert kernel_cache.drop_stale(folder, "new sources", python_tag=other)
    assert len(_kernels_of(folder, this)) == 2  # not its to drop
    assert kernel_cache.drop_stale(folder, "new sources")
    assert not _kernels_of(folder, this)


def test_unchanged_sources_keep_the_cache(tmp_path):
    folder = _cache(tmp_path, kernel_cache.PYTHON_TAG, stamp="same")
    assert not kernel_cache.drop_stale(folder, "same")
    assert len(_kernels_of(folder, kernel_cache.PYTHON_TAG)) == 2


def test_a_stale_cache_is_dropped_before_a_kernel_loads(tmp_path):
    # A new process with NUMBA_CACHE_DIR at a cache whose stamp is stale: the first kernel
    # module imported drops it, before any of its kernels is called.
    script = f"""
import os, sys
os.environ["NUMBA_CACHE_DIR"] = {str(tmp_path)!r}
from pathlib import Path
from xpbd_addon.core import kernel_cache
import numba  # noqa: F401 (numba reads NUMBA_CACHE_DIR now)
folder = kernel_cache.cache_folder(kernel_cache.CORE / "solve")
folder.mkdir(parents=True, exist_ok=True)
(folder / kernel_cache.KERNEL_STAMP).write_text("old sources")
fake = folder / ("kernels_frame.pin_start-1." + kernel_cache.PYTHON_TAG + ".nbi")
fake.write_bytes(b"stale")
from xpbd_addon.core.solve import kernels_frame  # noqa: F401
print("DROPPED" if not fake.exists() else "KEPT",
      (folder / kernel_cache.KERNEL_STAMP).read_text() == kernel_cache.digest())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=CORE.parent.parent, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["DROPPED", "True"]
