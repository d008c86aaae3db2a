"""The rope solve: numba kernels that predict, project the distance (and bending)
constraints and update velocities, one block of ropes at a time.

``kernels``: the sequential Gauss-Seidel sweep (any graph) and the 16-lane sweep;
``kernels_chain`` / ``kernels_direct`` / ``kernels_joint``: the direct (Newton) solve of a
chain; ``kernels_frame``: whole frames at once, copying x, v in and out; ``kernels_direct_io``:
one substep with the copies fused (frames with contacts); ``kernels_resolve``: the stretch
re-solve after contacts; ``kernels_sleep``: ropes at rest skip the rest of a frame.
"""
