"""The built linux-x64 package, installed and used in real Blender with no numba around it.

The package is built by ``tools.packaging`` (with the extension tool of the bpy that runs
this test) and installed with ``bpy.ops.extensions.package_install_files``. Blender runs in a
separate venv that holds bpy and everything else of this test's environment *except* numba
and llvmlite (symlinks, nothing downloaded), so the only numba that can load is the one the
package bundles; each phase is a fresh process (see ``blender_session.py``), as for a user
who installs, restarts Blender, uses and removes the add-on.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tools import packaging

from .conftest import blender_env as _env

pytestmark = [
    pytest.mark.blender,
    pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                       reason="the package test installs the linux-x64 package"),
]

SESSION = Path(__file__).with_name("blender_session.py")
@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The linux-x64 zip, built into a temporary folder (wheels come from the wheel cache)."""
    out = tmp_path_factory.mktemp("dist")
    zips = packaging.build(["linux-x64"], output_dir=out,
                           stage_root=tmp_path_factory.mktemp("stage"))
    assert [z.name for z in zips] == [f"{packaging.package_stem()}-linux_x64.zip"]
    return zips[0]


def _session(python: Path, user: Path, *args: str) -> dict:
    done = subprocess.run([str(python), str(SESSION), *args], env=_env(user),
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (
        f"blender_session {args} failed ({done.returncode}):\n{done.stdout[-4000:]}\n"
        f"{done.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def sessions(package: Path, numba_free_python: Path,
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Run the three phases once; the tests below each check one promise."""
    user = tmp_path_factory.mktemp("blender-user")
    install = _session(numba_free_python, user, "install", str(package))
    use = _session(numba_free_python, user, "use")
    after = _session(numba_free_python, user, "after")
    return {"install": install, "use": use, "after": after}


def test_installs_enabled_with_its_wheels(sessions: dict[str, dict]) -> None:
    install = sessions["install"]
    assert install["operator"] == ["FINISHED"]
    assert install["enabled"]
    unpacked = install["wheels_unpacked"]
    assert any(name.startswith("numba") for name in unpacked), unpacked
    assert any(name.startswith("llvmlite") for name in unpacked), unpacked
    assert not any(name.startswith("numpy") for name in unpacked), "numpy must not be bundled"


def test_bundled_numba_simulates_a_rope(sessions: dict[str, dict]) -> None:
    use = sessions["use"]
    # None where the bpy module cannot read saved preferences (4.2, see blender_session.py).
    assert use["enabled_at_start"] in (True, None), "not enabled in a new Blender process"
    assert not use["numba_imported_by_register"], "register() imported numba"
    site = use["local_site_packages"]
    assert use["numba_file"] and use["numba_file"].startswith(site), use["numba_file"]
    assert use["llvmlite_file"] and use["llvmlite_file"].startswith(site)
    sim = use["simulation"]
    rest, moved = sim["rest"], sim["moved"]
    assert moved[0] == pytest.approx(rest[0], abs=1e-6), "the pinned end moved"
    assert moved[-1][2] < rest[-1][2] - 0.05, "the free end did not fall"
    for point in moved:
        assert all(abs(c) < 10.0 for c in point)


def test_numba_caches_in_the_extension_user_folder(sessions: dict[str, dict]) -> None:
    use = sessions["use"]
    assert use["numba_cache_env"] == use["numba_cache_dir"]
    assert any(name.endswith(".nbi") for name in use["numba_cache_files"]), use


def test_disable_and_uninstall_leave_nothing(sessions: dict[str, dict]) -> None:
    use, after = sessions["use"], sessions["after"]
    enabled = use["while_enabled"]
    assert enabled["classes"] and enabled["object_property"] == ["Object.xpbd"], enabled
    assert enabled["operators"] and enabled["handlers"], enabled
    empty = {"classes": [], "object_property": [], "operators": [], "handlers": []}
    assert use["after_disable"] == empty
    assert use["after_uninstall"] == empty
    assert use["uninstall"] == ["FINISHED"]
    assert not use["enabled_after_uninstall"]
    assert not after["enabled"] and not after["loaded"]
    assert after["leftovers"] == empty
    traces = [f for f in after["files"] if "xpbd" in f.lower() or "numba" in f.lower()
              or "llvmlite" in f.lower() or f.endswith(".whl")]
    assert traces == [], traces
