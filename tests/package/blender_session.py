"""One Blender process of the package test: ``python blender_session.py PHASE [ZIP]``.

Run by ``test_extension_package.py`` in a venv that has bpy but no numba, with
``BLENDER_USER_RESOURCES`` set to a fresh folder, so Blender keeps its preferences,
extensions and their wheels there. Each phase is its own process because that is how a user
meets the package: install, restart Blender, use it, uninstall, restart.

    install ZIP  install + enable the package, save the preferences
    use          (fresh start) the add-on is enabled at start-up; the bundled numba runs a
                 rope; disable and uninstall it; check nothing is left in this process
    after        (fresh start) nothing of the add-on is loaded or left on disk

The last stdout line is ``RESULT <json>``; the test asserts on it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

PACKAGE_ID = "xpbd_rope"
REPO = "user_default"
MODULE = f"bl_ext.{REPO}.{PACKAGE_ID}"

_start = time.perf_counter()
import bpy  # noqa: E402  (timed: Blender's own start, for the report)

IMPORT_BPY_S = time.perf_counter() - _start
USER = Path(os.environ["BLENDER_USER_RESOURCES"])


READ_USERPREF_WORKS = bpy.app.version >= (4, 5, 0)
"""``wm.read_userpref`` crashes the bpy 4.2 module (segfault in 4.2.23, even with default
preferences); 4.5 and later read them fine."""


def start_like_blender(*, enable_fallback: bool) -> bool:
    """Load the saved preferences, enabling their add-ons, as Blender does when it starts
    (``import bpy`` starts from factory settings instead). Where that crashes (4.2), enable the
    add-on the way the start would if ``enable_fallback``; return whether prefs were read."""
    if READ_USERPREF_WORKS:
        bpy.ops.wm.read_userpref()
        return True
    if enable_fallback:
        import addon_utils

        addon_utils.enable(MODULE, default_set=True)
    return False


def user_files() -> list[str]:
    """Every file under the temporary user folder, relative, sorted."""
    return sorted(str(p.relative_to(USER)) for p in USER.rglob("*") if p.is_file())


def local_site_packages() -> Path:
    """Where Blender unpacks extensions' wheels for this Python."""
    return (Path(bpy.utils.user_resource("EXTENSIONS")) / ".local" / "lib"
            / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")


def enabled_addons() -> list[str]:
    return [addon.module for addon in bpy.context.preferences.addons]


def leftovers() -> dict[str, list[str]]:
    """Traces of the add-on in this process: classes, Object.xpbd, operators, handlers."""
    classes = [name for name in dir(bpy.types) if name.startswith(("XPBD_", "xpbd"))]
    handlers = []
    for name in dir(bpy.app.handlers):
        functions = getattr(bpy.app.handlers, name)
        if isinstance(functions, list):
            handlers += [f"{name}:{f.__module__}.{f.__name__}" for f in functions
                         if getattr(f, "__module__", "").startswith(MODULE)]
    return {
        "classes": classes,
        "object_property": ["Object.xpbd"] if hasattr(bpy.types.Object, "xpbd") else [],
        "operators": [op for op in dir(bpy.ops.xpbd)] if hasattr(bpy.ops, "xpbd") else [],
        "handlers": handlers,
    }


def phase_install(package: str) -> dict:
    result = bpy.ops.extensions.package_install_files(
        filepath=package, repo=REPO, enable_on_install=True)
    bpy.ops.wm.save_userpref()  # so the next process starts with the add-on enabled
    site = local_site_packages()
    return {
        "operator": sorted(result),
        "enabled": MODULE in enabled_addons(),
        "wheels_unpacked": sorted(p.name for p in site.iterdir()) if site.is_dir() else [],
    }


def simulate_rope() -> dict:
    """A rope through the add-on's own operator and frame handler if it has them, else through
    the installed package's core (the numba kernels either way)."""
    assert MODULE in sys.modules
    if hasattr(bpy.ops, "xpbd") and hasattr(bpy.ops.xpbd, "rope_add"):
        scene = bpy.context.scene
        scene.frame_set(scene.frame_start)
        assert bpy.ops.xpbd.rope_add(points=12, length=1.1) == {"FINISHED"}
        obj = bpy.context.view_layer.objects.active
        import numpy as np

        def points() -> np.ndarray:
            co = np.empty(len(obj.data.splines[0].points) * 4, dtype=np.float32)
            obj.data.splines[0].points.foreach_get("co", co)
            return co.reshape(-1, 4)[:, :3].astype(np.float64)

        rest = points()
        frame_times = []
        for frame in range(scene.frame_start + 1, scene.frame_start + 11):
            tick = time.perf_counter()
            scene.frame_set(frame)
            frame_times.append(time.perf_counter() - tick)
        moved = points()
        return {"via": "operator", "rest": rest.tolist(), "moved": moved.tolist(),
                "frame_times": frame_times}
    core = __import__(f"{MODULE}.core", fromlist=["Model"])
    import numpy as np

    positions = np.zeros((12, 3))
    positions[:, 0] = np.linspace(0.0, 1.1, 12)
    edges = np.stack([np.arange(11), np.arange(1, 12)], axis=1)
    inv_mass = np.ones(12)
    inv_mass[0] = 0.0
    model = core.Model(positions, edges, inv_mass, 0.0)
    state = model.state()
    frame_times = []
    for _ in range(10):
        tick = time.perf_counter()
        core.step(model, state, 1.0 / 24.0, 20)
        frame_times.append(time.perf_counter() - tick)
    return {"via": "core", "rest": positions.tolist(), "moved": state.x.tolist(),
            "frame_times": frame_times}


def phase_use() -> dict:
    read_prefs = start_like_blender(enable_fallback=True)
    enabled = MODULE in enabled_addons() and MODULE in sys.modules
    enabled_at_start = enabled if read_prefs else None  # None: could not be checked
    numba_before = "numba" in sys.modules  # registration must not import numba
    while_enabled = leftovers()  # proves the checks below look at the right places
    sim = simulate_rope()
    numba = sys.modules.get("numba")
    cache = Path(bpy.utils.extension_path_user(MODULE, path="numba_cache"))
    result = {
        "enabled_at_start": enabled_at_start,
        "numba_imported_by_register": numba_before,
        "numba_file": getattr(numba, "__file__", None),
        "llvmlite_file": getattr(sys.modules.get("llvmlite"), "__file__", None),
        "local_site_packages": str(local_site_packages()),
        "numba_cache_dir": str(cache),
        "numba_cache_files": sorted(p.name for p in cache.rglob("*") if p.is_file()),
        "numba_cache_env": os.environ.get("NUMBA_CACHE_DIR"),
        "simulation": sim,
        "while_enabled": while_enabled,
    }
    bpy.ops.preferences.addon_disable(module=MODULE)
    result["after_disable"] = leftovers()
    result["module_loaded_after_disable"] = MODULE in sys.modules
    repo = next(r for r in bpy.context.preferences.extensions.repos if r.module == REPO)
    result["uninstall"] = sorted(bpy.ops.extensions.package_uninstall(
        repo_directory=repo.directory, pkg_id=PACKAGE_ID))
    bpy.ops.wm.save_userpref()
    result["after_uninstall"] = leftovers()
    result["enabled_after_uninstall"] = MODULE in enabled_addons()
    return result


def phase_after() -> dict:
    start_like_blender(enable_fallback=False)
    return {
        "enabled": MODULE in enabled_addons(),
        "loaded": MODULE in sys.modules or "numba" in sys.modules,
        "leftovers": leftovers(),
        "files": user_files(),
    }


def main(argv: list[str]) -> None:
    phase = argv[0]
    if phase == "install":
        result = phase_install(argv[1])
    elif phase == "use":
        result = phase_use()
    elif phase == "after":
        result = phase_after()
    else:
        raise SystemExit(f"unknown phase {phase}")
    result["import_bpy_s"] = IMPORT_BPY_S
    result["blender"] = bpy.app.version_string
    sys.stdout.flush()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
