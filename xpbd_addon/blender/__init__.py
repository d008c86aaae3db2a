"""bpy adapters between Blender data and the solver core.

    geometry   bulk read/write of mesh and curve points (foreach_get/foreach_set, float32)
    rest       the rest shape, stored in the .blend on the object's data
    pins       which particles are pinned and where their evaluated targets are each frame
    sim        one simulated object (model, per-frame cache) and the module-level registry
    environment  numba's kernel cache folder, set at registration

Nothing here keeps simulation state in a PropertyGroup: the registry is rebuilt on demand
from the object's settings and its stored rest shape.
"""
