"""Can this Blender run the solver? Whether numba can load here, and if not, why.

numba is the dependency that breaks add-ons most often (missing, the wrong build for this
Python, or a numba that does not accept Blender's numpy), so this module finds out *why*
it cannot load and says it in one sentence that the panel shows instead of a traceback.

Cost rules, because ``register()`` runs at every Blender start:

- importing this module imports neither bpy nor numba (nor the core);
- ``numba_problem()`` only looks numba and llvmlite up (``importlib.util.find_spec``,
  microseconds) until ``load_numba()`` has really imported them once;
- ``load_numba()`` imports numba (about 0.2 s), so call it on the first simulated frame, not
  at registration, and only after ``setup_numba_cache()``.

The kernel cache folder is set at registration by ``blender.environment`` (it must be set
before numba is imported); this module never imports numba by itself.

Typical use (Blender side)::

    from . import dependencies
    # first step / bake / frame handler, after the cache folder is set:
    reason = dependencies.load_numba()
    if reason:  # report it, skip the step
        ...
    # panel draw:
    if (reason := dependencies.numba_problem()):
        layout.label(text=reason, icon='ERROR')
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading

REQUIRED = ("numba", "llvmlite")
"""Modules the kernels need beyond what Blender ships (numpy)."""

_load_error: str | None = None
"""Why the last ``load_numba()`` failed, or None if it succeeded or never ran."""

_loaded = False
"""Whether ``load_numba()`` imported numba and llvmlite completely (a module being imported
by another thread is in ``sys.modules`` already, half made)"""

IMPORTING = threading.RLock()
"""Held while numba is first imported (``load_numba``, and the preparation thread's look at
numba's cache before it): two threads importing numba at once meet half-made modules of
each other's and one fails with a circular ImportError ('cannot import name NullCache from
partially initialized module numba.core.caching'), which a rope built on Blender's thread
while the preparation imported numba showed as an Internal error."""


def numba_problem() -> str | None:
    """One sentence saying why the solver cannot run here, or None if it can (as far as is
    known without importing numba: a failed ``load_numba()`` is remembered)."""
    if _load_error is not None:
        return _load_error
    for name in REQUIRED:
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError) as error:  # a broken or half-removed install
            return f"{name} cannot be found ({error}): reinstall the XPBD Rope extension"
        if spec is None:
            return (f"{name} is not installed for this Blender (Python "
                    f"{sys.version_info[0]}.{sys.version_info[1]}): install the XPBD Rope "
                    "package built for this platform, which bundles it")
    return None


def load_numba() -> str | None:
    """Import numba and llvmlite now; return None on success, else the reason (also kept for
    ``numba_problem``). Cheap after the first call. Thread-safe: a call while another thread
    imports numba waits for it (``IMPORTING``)."""
    global _load_error, _loaded
    if _loaded or _load_error is not None:
        return _load_error
    with IMPORTING:  # (another thread importing numba: wait until it is done)
        if _loaded or _load_error is not None:
            return _load_error
        missing = numba_problem()
        if missing:
            _load_error = missing
            return missing
        try:
            for name in REQUIRED:
                importlib.import_module(name)
        except Exception as error:  # any failure to import is reported, never raised
            _load_error = _describe_import_error(error)
        else:
            _loaded = True
    return _load_error


def _describe_import_error(error: BaseException) -> str:
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    try:
        import numpy

        numpy_version = numpy.__version__
    except Exception:  # numpy itself broken: say so rather than fail while describing
        numpy_version = "unavailable"
    return (f"numba cannot load: {message} (Python {sys.version_info[0]}."
            f"{sys.version_info[1]}, numpy {numpy_version})")
