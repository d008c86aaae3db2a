"""XPBD solver core: numpy and numba only, never bpy (so it runs and is tested in plain Python).

    model = Model(positions, edges, inv_mass, compliance, rest_length=None, damping=0.0,
                  radius=0.0, self_collision=False)
    state = model.state()
    step(model, state, dt, substeps, gravity=(0, 0, -9.81), pin_targets=None,
         colliders=(Collider(vertices, triangles, vertices_end=None), Plane(point, normal)),
         accelerations=None, air=Air(density, normal_drag, tangential_drag), wind=None,
         pin_turns=None)             # a rod (Model(..., rod=Rod())): its ends' turns [rad]
    model = model.with_changes(removed_edges=[k])   # a cut: a new Model, the state goes on

Map of the core (each part imports only from those above it):

    validation.py    checks of the public inputs (ValueError naming the argument)
    kernel_cache.py  numba's cached kernels dropped when any kernel source changed (per Python)
    compile_helper.py  first use: a second process compiles the kernels other than the solve's
                     (those named in kernel_manifest.json) into numba's cache
    jit.py           how every kernel is compiled (numba: cached, GIL released)
    groups.py        the kernels' argument groups (plain tuples), each declared once
    layout/          how a particle graph is laid out for the kernels
      topology.py      chains (ropes) and the rest of the graph; the 16-lane buffer layout
      lanes.py         the lane buffers' fields as the kernels index them
      plan.py          SolvePlan (which kernel runs what), ContactTopology: static, per Model
      reach.py         the contact distances the layout derives from the radii
    collision.py     Collider (triangle meshes), Plane: the colliders of a frame
    contacts/        the contacts of a frame: FrameContacts (frame.py), the collider soup
                     (scene.py), its candidate lists (candidates.py), the rope-rope pairs
                     (ropes.py) and their kernels
    solve/           the rope solve kernels: predict (gravity + external accelerations),
                     project the constraints (sweep or direct Newton), update velocities
    rod.py           Rod: ropes that keep their modelled shape, twist and yield (material
                     frames per segment, solve/kernels_rod.py); RodState (State.rod)
    model.py         Model (static: what the rope is), State (x, v: where it is; rod: a
                     rod's frames; rest: how long each rope has been still, which sleep)
    sleep.py         ropes at rest sleep through whole frames (State.rest), what wakes them
    workspace.py     Workspace (State.workspace): scratch and what step carries between
                     frames (lane buffers, the contacts' candidates), declared field by field
    air.py           Air: the drag of the air (and the wind) on segments as on cylinders
    solver.py        step / step_sequential: one frame of substeps, the stages in order
    tension.py       edge_tension: each constraint's force after a step (tearing, breaking),
                     kept in State.tension, which the next step's solve starts from
    energy.py        stored_energy: what the constraints store (stretch, bending, a rod's
                     twist) [J]
    soft_pins.py     step_with_soft_pins: particles held by springs (an implicit spring is
                     the rope's own solve with a heavier particle and a shifted prediction)
    warmup.py        warm: compile a model's kernels ahead (e.g. on a thread)
    material.py, bone_frames.py   rope materials to model parameters; bone frames for bakes

A Model never changes after it is made; a State owns its Workspace, so one Model can be
stepped with any number of States. A new force is a new source of ``accelerations``; a
changed rope (cut, winched, stiffened) is ``Model.with_changes``.

numba is imported on the first ``step``. To put its cache somewhere else (Blender does, into
the extension's user folder), call ``configure_numba(cache_dir)`` before that.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .air import Air
    from .collision import Collider, Plane
    from .model import Model, State
    from .rod import Rod
    from .solver import step
    from .tension import edge_tension

__all__ = ["Air", "Collider", "Model", "Plane", "Rod", "State", "step", "edge_tension",
           "configure_numba", "numba_loaded"]

_LAZY = {"Air": ".air", "Collider": ".collision", "Plane": ".collision", "Model": ".model",
         "Rod": ".rod", "State": ".model", "step": ".solver", "edge_tension": ".tension"}
"""Public names imported on first use (PEP 562): they need numpy, and the add-on's
``register()`` imports this package for ``configure_numba`` at Blender start, where Blender
4.2 has not loaded numpy yet (50-90 ms). ``from xpbd_addon.core import Model`` still works."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def numba_loaded() -> bool:
    """True once this process has imported numba (after which its cache folder is fixed)."""
    return "numba" in sys.modules


def configure_numba(cache_dir: str) -> bool:
    """Send numba's on-disk kernel cache to ``cache_dir`` (a user-writable folder).

    It must happen before numba is first imported, because numba reads NUMBA_CACHE_DIR once.
    Returns True if the setting took effect, False if numba was already loaded with another
    cache folder (the kernels still work, they just cache where numba had decided).
    """
    if numba_loaded() and os.environ.get("NUMBA_CACHE_DIR") != cache_dir:
        return False
    os.environ["NUMBA_CACHE_DIR"] = cache_dir
    return True
