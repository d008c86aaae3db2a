"""Blender's force fields on a rope's points, evaluated as Blender's own particles feel them.

``read_fields(objects)`` takes a frame's snapshot of the field objects (immutable
``FieldSource``s: the field's settings and the object's world matrix, read through bpy);
``evaluate(sources, x, v, frame)`` is then plain numpy: for each point at x [m] moving at
v [m/s] it returns

* ``force`` (N, 3) [N]: what Force, Vortex, Harmonic, Drag and Turbulence fields push the
  point with, the formulas of Blender's ``effect.cc`` (``do_physical_effector``) with
  velocities in m/s (a particle's ``vel_to_sec`` of 1); a point of mass m [kg] is
  accelerated by force / m, as Blender's particles and cloth vertices are;
* ``wind`` (N, 3) [m/s]: the air's velocity that Wind fields make, strength * falloff along
  the field object's Z axis; it acts through the rope's air drag (``core.air``), normal to
  the segments, so a rope lying along the wind feels none. strength [m/s] is the speed a
  Blender particle of any mass drifts at in the same field with its default flow of 1.

The falloff (sphere, tube, cone; power; min/max distance and radius; the Z direction) and
the field shapes point, line and plane are Blender's (``effector_falloff``,
``get_effector_data``); surface and vertex (``POINTS``) shapes, Texture, Charge, Magnetic,
Lennard-Jones, Boid, Guide and Fluid Flow fields are skipped (``FieldSample.skipped`` names
them). docs/blender-usage.md has each field's formula, its units and where the rope differs
from Blender's particles (noise, wind).

Noise (the fields' ``noise`` setting) is drawn from a generator seeded with the field's seed
and the frame number, one value per point, so a frame is the same however it is reached;
Blender draws it from one random sequence per frame in the order its points are evaluated
(the same distribution, other values).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

FORCE_TYPES = ("FORCE", "VORTEX", "HARMONIC", "DRAG", "TURBULENCE")
"""The field types that push the points with a force (``FieldSample.force``)"""
WIND_TYPES = ("WIND",)
"""The field types that move the air (``FieldSample.wind``)"""
SHAPES = ("POINT", "LINE", "PLANE")
"""The field shapes evaluated (Blender's SURFACE and POINTS need the emitter's mesh)"""


class FieldSource(NamedTuple):
    """One force field at one frame: its settings (Blender's ``FieldSettings`` names) and
    where its object is. Made by ``read_fields``; plain values, safe to keep."""

    name: str
    """The object's name (for messages)"""
    type: str
    """``FieldSettings.type``: 'FORCE', 'WIND', 'VORTEX', 'HARMONIC', 'DRAG', 'TURBULENCE'"""
    matrix: np.ndarray
    """(4, 4) the object's world matrix; its Z axis is the field's direction [m]"""
    shape: str = "POINT"
    strength: float = 1.0
    """The force [N] (Force, Turbulence), speed [m/s] (Wind), rate (Vortex) or stiffness
    [N/m] (Harmonic)"""
    flow: float = 0.0
    """[kg/s] Blender's flow (``inflow`` of a Vortex): the force -flow * falloff * v"""
    noise: float = 0.0
    seed: int = 0
    falloff_type: str = "SPHERE"
    falloff_power: float = 0.0
    z_direction: str = "BOTH"
    use_min_distance: bool = False
    distance_min: float = 0.0
    use_max_distance: bool = False
    distance_max: float = 0.0
    use_radial_min: bool = False
    radial_min: float = 0.0
    use_radial_max: bool = False
    radial_max: float = 0.0
    radial_falloff: float = 0.0
    size: float = 0.0
    """Turbulence: the noise's size [m]; Harmonic: its rest length [m] (Blender's f_size)"""
    damping: float = 0.0
    """Harmonic: its damping; Drag: Blender's ``quadratic_drag`` (f_damp, see the docs)"""
    use_gravity_falloff: bool = False
    use_global_coords: bool = False
    apply_to_location: bool = True


class FieldSample(NamedTuple):
    """The fields at a rope's points (``evaluate``)."""

    force: np.ndarray
    """(N, 3) [N] the force of the Force, Vortex, Harmonic, Drag and Turbulence fields"""
    wind: np.ndarray
    """(N, 3) [m/s] the air's velocity from the Wind fields"""
    skipped: tuple[str, ...] = ()
    """'object: why' for the fields left out (shapes and types not evaluated)"""


def field_objects(objects: Iterable[Any]) -> list[Any]:
    """The objects among ``objects`` that carry a force field of any type."""
    found = []
    for obj in objects:
        field = getattr(obj, "field", None)
        if field is not None and field.type != "NONE":
            found.append(obj)
    return found


_SCANNED: dict[int, list[Any]] | None = None
"""Within ``one_scan``: each scene's field objects (by its pointer), found once"""


@contextmanager
def one_scan() -> Iterator[None]:
    """While the handler brings every rope's settings key up to date (``sim.ensure`` for
    each), the scene is the same for all of them: its field objects are looked for once, not
    once per rope (100 ropes in a scene of 300 objects: 3 ms a frame). Outside it, every call
    looks again."""
    global _SCANNED
    _SCANNED = {}
    try:
        yield
    finally:
        _SCANNED = None


def scene_field_objects(scene: Any) -> list[Any]:
    """The objects of ``scene`` (originals) that carry a force field, sorted by name."""
    if _SCANNED is not None and scene.as_pointer() in _SCANNED:
        return _SCANNED[scene.as_pointer()]
    found = sorted(field_objects(scene.objects), key=lambda o: o.name)
    if _SCANNED is not None:
        _SCANNED[scene.as_pointer()] = found
    return found


def read_fields(objects: Iterable[Any]) -> list[FieldSource]:
    """A ``FieldSource`` for each field object (evaluated objects, so animated settings and
    parents are this frame's). Objects without a field are left out."""
    sources = []
    for obj in field_objects(objects):
        f = obj.field
        drag = f.type == "DRAG"
        sources.append(FieldSource(
            name=obj.name, type=f.type, matrix=np.array(obj.matrix_world, dtype=np.float64),
            shape=f.shape,
            # Blender's Drag keeps its two terms in f_strength and f_damp, shown as
            # linear_drag and quadratic_drag
            strength=float(f.linear_drag if drag else f.strength),
            flow=float(f.inflow if f.type == "VORTEX" else f.flow),
            noise=float(f.noise), seed=int(f.seed), falloff_type=f.falloff_type,
            falloff_power=float(f.falloff_power), z_direction=f.z_direction,
            use_min_distance=bool(f.use_min_distance), distance_min=float(f.distance_min),
            use_max_distance=bool(f.use_max_distance), distance_max=float(f.distance_max),
            use_radial_min=bool(f.use_radial_min), radial_min=float(f.radial_min),
            use_radial_max=bool(f.use_radial_max), radial_max=float(f.radial_max),
            radial_falloff=float(f.radial_falloff),
            size=float(f.rest_length if f.type == "HARMONIC" else f.size),
            damping=float(f.quadratic_drag if drag else f.harmonic_damping),
            use_gravity_falloff=bool(f.use_gravity_falloff),
            use_global_coords=bool(f.use_global_coords),
            apply_to_location=bool(f.apply_to_location)))
    return sources


def acting_on(depsgraph: Any, rope: Any, collection: Any) -> list[FieldSource]:
    """The fields acting on the rope object ``rope`` (original) at the depsgraph's frame:
    the evaluated field objects of the view layer (hidden ones are not evaluated, as for
    Blender's cloth) but the rope itself, only those of ``collection`` (its
    ``all_objects``) unless it is None. Sorted by name: a frame is made the same however
    the scene lists its objects."""
    names = None if collection is None else {o.name for o in collection.all_objects}
    found = [obj for obj in field_objects(depsgraph.objects)
             if obj.original.name != rope.name and (names is None or obj.original.name in names)]
    found.sort(key=lambda obj: obj.original.name)
    return read_fields(found)


_SOURCE_NAMES = {"linear_drag": "strength", "inflow": "flow", "rest_length": "size",
                 "quadratic_drag": "damping", "harmonic_damping": "damping"}
"""``FieldSettings`` names whose value ``read_fields`` keeps under another name."""


def _animated_paths(obj: Any) -> set[str]:
    """The data paths of ``obj`` that keyframes or drivers set ('field.strength', ...)."""
    from ..bake.action_compat import fcurves_of

    paths = {f.data_path for f in fcurves_of(obj)}
    anim = obj.animation_data
    if anim is not None:
        paths |= {d.data_path for d in anim.drivers}
    return paths


def static_key(rope: Any, scene: Any, collection: Any) -> tuple:
    """What the fields acting on ``rope`` are made of that does not change from frame to
    frame (part of ``sim.settings_key``: a change restarts the rope's frames, as a change of
    its settings does): which field objects act (the collection's members, visibility), and
    each one's settings and placement, except what keyframes, drivers, parents or
    constraints set (read at every frame), for which the keys' signature stands in."""
    names = None if collection is None else {o.name for o in collection.all_objects}
    parts: list[Any] = []
    for obj in scene_field_objects(scene):
        if obj.name == rope.name or (names is not None and obj.name not in names):
            continue
        source = read_fields([obj])[0]
        animated = _animated_paths(obj)
        moved = bool(obj.parent or obj.constraints or animated - {
            p for p in animated if p.startswith("field.")})
        keyed = {_SOURCE_NAMES.get(p[6:], p[6:]) for p in animated if p.startswith("field.")}
        kept = {k: v for k, v in source._asdict().items()
                if k not in keyed and not (k == "matrix" and moved)}
        if "matrix" in kept:
            kept["matrix"] = kept["matrix"].tobytes()
        if animated:  # the keys the animated values come from
            from .animated import keys_signature

            kept["keys"] = keys_signature(obj)
        parts.append((obj.hide_viewport, obj.hide_render, obj.hide_get(),
                      tuple(sorted(kept.items()))))
    return tuple(parts)


def _falloff_curve(distance: np.ndarray, use_min: bool, minimum: float, use_max: bool,
                   maximum: float, power: float) -> np.ndarray:
    """Blender's ``falloff_func``: 1 / (1 + d - d_min)^power, 0 beyond the max distance,
    1 within the min distance (d_min = 0 without a min)."""
    start = minimum if use_min else 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        curve = np.power(1.0 + distance - start, -power)
    if use_min:
        curve = np.where(distance < minimum, 1.0, curve)
    if use_max:
        curve = np.where(distance > maximum, 0.0, curve)
    return curve


def falloff(source: FieldSource, x: np.ndarray, to_point: np.ndarray,
            distance: np.ndarray) -> np.ndarray:
    """(N,) Blender's ``effector_falloff`` of ``source`` at points x [m]: the Z direction
    cut, then the sphere (by ``distance`` to the field's point), tube (by the height along
    its Z axis, then the radius from it) or cone (by the height, then the angle from the
    axis in degrees)."""
    origin, axis = _origin_axis(source)
    relative = x - origin
    height = relative @ axis
    dist = (source.use_min_distance, source.distance_min, source.use_max_distance,
            source.distance_max, source.falloff_power)
    radial = (source.use_radial_min, source.radial_min, source.use_radial_max,
              source.radial_max, source.radial_falloff)
    if source.falloff_type == "TUBE":
        out = _falloff_curve(np.abs(height), *dist)
        radius = np.linalg.norm(relative - height[:, None] * axis, axis=1)
        out = out * _falloff_curve(radius, *radial)
    elif source.falloff_type == "CONE":
        out = _falloff_curve(np.abs(height), *dist)
        length = np.linalg.norm(relative, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine = np.clip(np.where(length > 0.0, height / length, 1.0), -1.0, 1.0)
        out = out * _falloff_curve(np.degrees(np.arccos(cosine)), *radial)
    else:
        out = _falloff_curve(distance, *dist)
    if source.z_direction == "POSITIVE":
        out = np.where(height < 0.0, 0.0, out)
    elif source.z_direction == "NEGATIVE":
        out = np.where(height > 0.0, 0.0, out)
    return out


def _origin_axis(source: FieldSource) -> tuple[np.ndarray, np.ndarray]:
    """The field object's location [m] and unit Z axis."""
    z = source.matrix[:3, 2]
    norm = float(np.linalg.norm(z))
    return source.matrix[:3, 3].copy(), (z / norm if norm > 0.0 else np.array([0., 0., 1.]))


def _to_point(source: FieldSource, x: np.ndarray) -> np.ndarray:
    """Blender's ``vec_to_point``: from the field's point to x, the field's point being its
    object's location (point shape), the nearest point of its Z axis (line shape, and every
    Vortex but a point one) or of its XY plane (plane shape)."""
    origin, axis = _origin_axis(source)
    relative = x - origin
    if source.shape in ("LINE", "PLANE"):
        along = (relative @ axis)[:, None] * axis
        if source.type == "VORTEX" or source.shape == "LINE":
            return relative - along
        return along  # x minus its projection on the plane
    return relative


def _noise(source: FieldSource, frame: float, count: int) -> np.ndarray:
    """(count,) the strength added by the field's noise at this frame, one per point: the
    distribution of Blender's ``wind_func`` (sign * r / (1 + u) * noise / 128, r an integer
    0..127, u uniform in [0, 1)), from a generator seeded with (seed, frame) only."""
    rng = np.random.default_rng([source.seed & 0xFFFFFFFF, int(math.floor(abs(frame)))])
    r = rng.integers(0, 128, count)
    u = rng.random(count)
    sign = np.where(r > 64, 1.0, -1.0)
    return sign * (r / (1.0 + u)) * source.noise / 128.0


def _unit(vectors: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, length, out=np.zeros_like(vectors), where=length > 0.0)


def _turbulence(source: FieldSource, x: np.ndarray) -> np.ndarray:
    """(N, 3) Blender's turbulence vector in -1..1: per component -1 + 2 T(size, p) of the
    point p (global coordinates) or p - origin + Z axis (the object's), T the three-octave
    turbulence of Blender's improved Perlin noise (BLI_noise_generic_turbulence, basis 2)
    with the coordinates rotated per component. Evaluated with ``mathutils.noise`` (the same
    noise), point by point: a turbulence field costs about 10 us per point."""
    from mathutils import noise  # the one import from Blender here: its noise is the field's

    origin, axis = _origin_axis(source)
    p = x if source.use_global_coords else x - origin + axis
    scale = 1.0 / source.size if source.size != 0.0 else 1.0
    out = np.empty_like(x)
    octaves = 2  # Blender's turbulence field: depth 2, i.e. 3 octaves, soft
    norm = (1 << octaves) / ((1 << (octaves + 1)) - 1)
    for i, (a, b, c) in enumerate(p * scale):
        for k, (u, v, w) in enumerate(((a, b, c), (b, c, a), (c, a, b))):
            total, amplitude, frequency = 0.0, 1.0, 1.0
            for _ in range(octaves + 1):
                value = noise.noise((frequency * u, frequency * v, frequency * w),
                                    noise_basis="PERLIN_NEW")
                total += (0.5 + 0.5 * value) * amplitude
                amplitude *= 0.5
                frequency *= 2.0
            out[i, k] = -1.0 + 2.0 * total * norm
    return out


def _one(source: FieldSource, x: np.ndarray, v: np.ndarray, frame: float
         ) -> tuple[np.ndarray, np.ndarray]:
    """(force [N], wind [m/s]), each (N, 3), of one field (``do_physical_effector``)."""
    n = len(x)
    zero = np.zeros((n, 3))
    to_point = _to_point(source, x)
    distance = np.linalg.norm(to_point, axis=1)
    fall = falloff(source, x, to_point, distance)
    strength = np.full(n, source.strength)
    damping = np.full(n, source.damping)
    if source.noise > 0.0:
        strength = strength + _noise(source, frame, n)
        if source.type in ("HARMONIC", "DRAG"):
            damping = damping + _noise(source._replace(seed=source.seed + 1), frame, n)
    origin, axis = _origin_axis(source)
    kind = source.type
    s = (strength * fall)[:, None]
    if kind == "WIND":
        return zero, s * axis
    if kind == "FORCE":
        if source.use_gravity_falloff:
            with np.errstate(divide="ignore"):
                strength = np.where(distance < 1.2e-7, 0.0, strength / distance ** 2)
            s = (strength * fall)[:, None]
        force = _unit(to_point) * s
    elif kind == "VORTEX":
        if source.shape == "POINT":
            force = _unit(np.cross(axis, to_point)) * (s * distance[:, None])
        else:
            swirl = np.cross(axis, x - origin) * s
            force = np.cross(axis, swirl) * s + swirl - v
    elif kind == "HARMONIC":
        stretch = to_point
        if source.size != 0.0:
            with np.errstate(divide="ignore", invalid="ignore"):
                stretch = to_point * np.where(distance > 0.0, (distance - source.size)
                                              / distance, 0.0)[:, None]
        force = -stretch * s - v * (damping * 2.0 * np.sqrt(np.abs(strength)))[:, None]
    elif kind == "DRAG":
        speed = np.linalg.norm(v, axis=1)
        quadratic = np.minimum(strength, 2.0)
        linear = np.minimum(damping, 2.0)
        force = -_unit(v) * (fall * speed * (quadratic * speed + linear))[:, None]
    elif kind == "TURBULENCE":
        force = _turbulence(source, x) * s
    else:
        return zero, zero
    if kind not in ("HARMONIC", "DRAG") and source.flow != 0.0:
        force = force - v * (source.flow * fall)[:, None]
    return force, zero


def evaluate(sources: Sequence[FieldSource], x: Any, v: Any, frame: float) -> FieldSample:
    """The force [N] and wind [m/s] of ``sources`` at points x [m] moving at v [m/s] (N, 3)
    at ``frame`` (the noise's seed; see the module). Fields of other types or shapes, and
    fields not applied to location, are skipped and named."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, 3)
    v = np.asarray(v, dtype=np.float64).reshape(-1, 3)
    force = np.zeros_like(x)
    wind = np.zeros_like(x)
    skipped = []
    for source in sources:
        if source.type not in FORCE_TYPES + WIND_TYPES:
            skipped.append(f"{source.name}: {source.type.title()} fields do not act on ropes")
            continue
        if source.shape not in SHAPES:
            skipped.append(f"{source.name}: the {source.shape.title()} shape is not "
                           "supported (Point, Line and Plane are)")
            continue
        if not source.apply_to_location:
            continue
        one_force, one_wind = _one(source, x, v, frame)
        force += one_force
        wind += one_wind
    return FieldSample(force, wind, tuple(skipped))


def accelerations(sample: FieldSample, inv_mass: np.ndarray, weight: float = 1.0
                  ) -> np.ndarray:
    """(N, 3) [m/s^2] the fields' accelerations of points of inverse masses ``inv_mass``
    [1/kg]: weight * force / m (pinned points, inverse mass 0, get none). ``weight`` is the
    rope's field weight (``Object.xpbd.field_weight``)."""
    return sample.force * (weight * np.asarray(inv_mass, dtype=np.float64))[:, None]
