"""bpy adapters between Blender data and the solver core, in rooms that say what they hold:

    read/      Blender's data in: a rope's layout and stored points (geometry), its rest
               shape kept in the .blend (rest), pins and their evaluated targets (pins),
               attachments (attachments), keyed and driven settings (animated), the scene's
               collision objects (collision_objects, tessellation)
    frame/     the frame engine: one rope's simulation and the registry (sim), the runs
               that step ropes together (runs, group, members, engine), a frame's inputs
               (inputs) and their hand-off to the core (handoff), subframes, the safety net
               (checks), the readouts
    write/     geometry out: a writer per kind of data (kinds: mesh, curve, a place for hair
               Curves), the write-back's numba helpers (io_kernels), tears, shared data
    bake/      baking: the bake job and its keys, bones, point caches, loops, exports, and
               the version-aware F-Curve writing (action_compat)

    schema.py       every setting of Object.xpbd, declared once (no bpy)
    errors.py       RopeError, RetryError (no numpy)
    environment.py  numba's kernel cache folder, set at registration

Each room imports the ones it needs by relative imports (an installed extension is the
package ``bl_ext.<repository>.xpbd_rope``). Nothing here keeps simulation state in a
PropertyGroup: the registry is rebuilt on demand from the object's settings and its stored
rest shape.
"""
