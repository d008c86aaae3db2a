"""Environment set-up done at registration: where numba caches its compiled kernels."""

from __future__ import annotations

import os
import tempfile

import bpy

from .. import core


def numba_cache_dir(package: str) -> str:
    """The extension's user folder ``numba_cache`` (numba caches its compiled
    kernels in a user-writable folder). When the add-on is not
    running as an installed extension (e.g. imported as top-level ``xpbd_addon`` in tests),
    Blender has no such folder for it; a per-user temporary folder is used instead."""
    try:
        return bpy.utils.extension_path_user(package, path="numba_cache", create=True)
    except (ValueError, KeyError, RuntimeError, AttributeError):
        folder = os.path.join(tempfile.gettempdir(), f"xpbd_rope_numba_cache_{os.getuid()}"
                              if hasattr(os, "getuid") else "xpbd_rope_numba_cache")
        os.makedirs(folder, exist_ok=True)
        return folder


def configure_numba_cache(package: str) -> bool:
    """Point numba's cache at ``numba_cache_dir`` before numba is imported (core does that on
    the first step). False if numba was already loaded with another folder (still works)."""
    return core.configure_numba(numba_cache_dir(package))
