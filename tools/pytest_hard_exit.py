"""pytest plugin for ``build.py matrix``: end the process with pytest's exit status once the
session is over, skipping the interpreter's own shutdown.

Why: the bpy modules of Blender 4.2 and 4.5 crash (4.2.23, segfault) or hang (4.5.15) while
Python shuts down if a class with a property ``update=`` callback is still registered, as
after a test that registered the add-on in-process. The tests have all run and been reported
by then; without this, the matrix would report a crash or wait forever for a finished run.
Loaded only for those versions (``-p tools.pytest_hard_exit``).
"""

from __future__ import annotations

import os
import sys

import pytest

_status: int | None = None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remember the session's exit status for ``pytest_unconfigure``."""
    global _status
    _status = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After every other plugin has finished (reports written), leave at once."""
    if _status is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_status)
