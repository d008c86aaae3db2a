"""`python -m benchmarks [name ...] [--quick]`: run benchmarks (default: the core's).

Names: core, handler, startup, first_use (the first frame from an empty kernel cache, each
kernel's compile time), builtin, collision, collision_ab, cloth_collision, bake,
damping, reference (`step` against a minimal C kernel, interleaved), pile (crossed ropes on
the floor coming to rest), thin (ropes on wires and poles: where the segment contacts hold),
rods (a rod's cost against the same rope's, with the shape each keeps), rod_energy (rods
released at random: how many gain energy, per substep count), bend_energy (bending ropes
drawn at random, with `--ref=COMMIT` against that commit: how many gain energy), flops (the
direct solve's flops per particle and Newton step, and the fraction of the CPU's peak it runs
at), readouts (what the panel's numbers cost a frame).
The
Blender ones need the bpy venv (build.py bench uses .venv, which has it); `builtin` also
measures Blender 5.3 if `.venv-5.3` exists. `cloth_collision` is Blender's Cloth with
collisions on the scenes of `collision` (with our solver's rows beside it; `--blender53`
adds bpy 5.3).
`collision_ab --ref=COMMIT` runs `collision`'s terrain with that commit's core and the
working tree's in turns, in one process (this VM's speed drifts more than most changes gain);
`step_ab --ref=COMMIT` does the same for the cost of a `step` call without contacts,
`air_ab --ref=COMMIT` for default ropes with and without air, and
`small_contacts_ab --ref=COMMIT` for a 12-point rope on a collider (the cost of kernel calls).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = {
    "core": "bench_core.py",
    "handler": "bench_handler.py",
    "startup": "bench_startup.py",
    "first_use": "bench_first_use.py",
    "builtin": "blender_builtin.py",
    "collision": "bench_collision.py",
    "collision_ab": "bench_collision_ab.py",
    "air_ab": "bench_air_ab.py",
    "cloth_collision": "blender_cloth_collision.py",
    "bake": "bench_bake.py",
    "damping": "bench_damping.py",
    "reference": "bench_reference.py",
    "step_ab": "bench_step_ab.py",
    "small_contacts_ab": "bench_small_contacts_ab.py",
    "pile": "bench_pile.py",
    "thin": "bench_thin.py",
    "rods": "bench_rods.py",
    "rod_energy": "bench_rod_energy.py",
    "bend_energy": "bench_bend_energy.py",
    "flops": "bench_flops.py",
    "readouts": "bench_readouts.py",
}


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("-")] or ["core"]
    flags = [a for a in argv if a.startswith("-")]
    if names == ["all"]:
        names = [name for name in SCRIPTS if not name.endswith("_ab")]  # a comparison, not a figure
    code = 0
    for name in names:
        if name not in SCRIPTS:
            print(f"unknown benchmark {name!r}; choose from {', '.join(SCRIPTS)} or all")
            return 2
        print(f"== {name} ==", flush=True)
        code |= subprocess.run([sys.executable, str(HERE / SCRIPTS[name]), *flags]).returncode
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
