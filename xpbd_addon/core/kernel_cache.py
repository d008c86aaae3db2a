"""numba's on-disk cache of the core's kernels, kept from going stale.

numba keys a cached kernel on its own source file only (its modification time and size), but
a kernel here inlines the helpers and layout constants it calls from other files: after a
change in one of those, numba would load machine code compiled from the old sources. So a
stamp with the hash of every kernel source sits in each kernel folder's cache; where it differs,
this interpreter's cached kernels there are deleted (index and data) before any kernel is
loaded, and they compile again.

- ``check`` runs when ``jit`` is imported, which every kernel module does before it defines a
  kernel: no kernel is loaded from the cache before the check.
- The stamp is per Python version (``KERNEL_STAMP``), as numba's cache files are: two Blender
  versions sharing a cache folder each drop their own stale kernels. (One stamp shared by all
  Pythons let one Python's run mark the folder fresh and leave another Python's stale
  kernels in place.)
- numba's internals are used defensively: at worst this does nothing and numba behaves as
  usual.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

PYTHON_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}"
"""numba's tag of this Python in its cache file names (``<kernel>-<line>.py311.nbi``)"""



def stamp_name(python_tag: str) -> str:
    """The stamp's file name in a cache folder for the Python tagged ``python_tag``."""
    return f"xpbd-kernels.{python_tag}.sha256"


KERNEL_STAMP = stamp_name(PYTHON_TAG)
"""This Python's stamp's file name (also in a package's precompiled kernels)"""

KERNEL_SOURCES = ("jit.py", "layout/topology.py", "layout/lanes.py", "solve/kernels.py",
                  "solve/kernels_air.py", "solve/kernels_direct.py", "solve/kernels_joint.py",
                  "contacts/kernels_geometry.py", "contacts/kernels_collider.py",
                  "contacts/kernels_resting.py", "contacts/kernels_contact.py",
                  "contacts/kernels_broadphase.py", "solve/kernels_resolve.py",
                  "contacts/kernels_pairs.py", "contacts/kernels_segments.py",
                  "solve/kernels_direct_io.py", "solve/kernels_sleep.py",
                  "solve/kernels_chain.py", "solve/kernels_frame.py",
                  "contacts/kernels_edges.py", "contacts/kernels_edge_search.py",
                  "contacts/kernels_region.py", "contacts/kernels_wake.py",
                  "solve/kernels_rod.py", "solve/kernels_rod_pull.py", "solve/kernels_held.py",
                  "solve/kernels_stretch.py", "contacts/kernels_arrays.py")
"""The files (paths from the core's folder) whose hash is the stamp: every file with a kernel
and what the kernels import from (``tests/core/test_kernel_cache.py`` checks the list)."""

KERNEL_FOLDERS = ("solve", "contacts")
"""The core's folders holding kernels: each has its own cache folder"""

CORE = Path(__file__).parent


def digest() -> str:
    """The hash of the kernel sources (sha256, hex)."""
    return hashlib.sha256(b"".join((CORE / name).read_bytes()
                                   for name in KERNEL_SOURCES)).hexdigest()


def cache_folder(source_folder: Path) -> Path | None:
    """Where numba caches the kernels of the files in ``source_folder`` (its own choice:
    NUMBA_CACHE_DIR, else beside the sources, else the user's cache), or None if it
    cannot tell."""
    from numba.core import caching

    implementation: Any = getattr(caching, "_CacheImpl", None) or caching.CacheImpl
    probe_file = str(source_folder / "__init__.py")
    for locator_class in implementation._locator_classes:
        locator = locator_class.from_function(_probe, probe_file)
        if locator is not None:
            return Path(locator.get_cache_path())
    return None


def _probe() -> None:
    """A function numba's cache locators are asked about (they read its first line)."""


def drop_stale(folder: Path, stamp: str, *, python_tag: str = PYTHON_TAG) -> bool:
    """Delete the cached kernels of the Python tagged ``python_tag`` (this one) in ``folder``
    unless its stamp there is ``stamp``; then write the stamp. True if they were stale."""
    stamp_file = folder / stamp_name(python_tag)
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        return False
    # The data files too: numba names a new entry's data file after the entries its index
    # holds, and writes the index first, so a stale data file could be read for a new entry.
    for pattern in (f"*.{python_tag}.nbi", f"*.{python_tag}.*.nbc"):
        for path in folder.glob(pattern):
            path.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    stamp_file.write_text(stamp)
    return True


def check() -> None:
    """Drop this Python's stale cached kernels in every kernel folder's cache (see the
    module docstring). Never raises: a cache that cannot be checked is left to numba."""
    try:
        stamp = digest()
        for name in KERNEL_FOLDERS:
            folder = cache_folder(CORE / name)
            if folder is not None:
                drop_stale(folder, stamp)
    except (AttributeError, ImportError, OSError, TypeError):
        pass
