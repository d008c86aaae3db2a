"""``python3 build.py package``: build validated Blender extension packages with numba inside.

    python3 build.py package                      every platform -> dist/*.zip
    python3 build.py package --platform linux-x64 one platform (repeatable)
    python3 build.py package --offline            use only .wheel_cache/, never pip
    python3 build.py package --split-python       also split by Blender Python (smaller)

What it does, per *variant* (a set of platforms that share one numba release):

1. fetch the numba and llvmlite wheels for each platform and each Blender Python into the
   wheel cache (``.wheel_cache/``, or ``$XPBD_WHEEL_CACHE``), with ``pip download
   --only-binary=:all: --no-deps``; wheels already there are not fetched again, so rebuilds
   work offline. numpy is never bundled: Blender ships its own, and a second numpy in the
   same process breaks it;
2. stage ``blender_manifest.toml`` (with this variant's ``platforms``, ``wheels`` and
   ``blender_version_max``) and the contents of ``xpbd_addon/`` (no tests, no caches) into
   ``build/package/<variant>/``: the package needs ``__init__.py`` beside the manifest;
3. run Blender's own extension tool from the bpy wheel (``blender_ext.py build
   --split-platforms``), which writes one zip per platform holding only that platform's
   wheels, then ``blender_ext.py validate`` on each zip, with Blender's tag list.

Why two variants: Blender installs only the wheels that match its platform and Python
(``bl_extension_ops._extensions_wheel_filter_for_this_system``, 4.2 and later), so one
package can carry cp311 wheels (Blender 4.2-5.0) and cp313 wheels (5.1+) side by side.
Intel Macs are different: numba 0.62.1 / llvmlite 0.45.1 are the last releases with
``macosx_*_x86_64`` wheels, and Blender 5.0 dropped Intel Macs, so ``macos-x64`` gets its own
package with the older numba, cp311 only, and ``blender_version_max = "5.0.0"`` (exclusive).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from tools import precompile

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "blender_manifest.toml"
SOURCE = ROOT / "xpbd_addon"
STAGE_ROOT = ROOT / "build" / "package"
DIST = ROOT / "dist"
WHEEL_CACHE = Path(os.environ.get("XPBD_WHEEL_CACHE", ROOT / ".wheel_cache"))

# Staging leaves these out of the package: tests need pytest, caches are machine-specific.
STAGE_IGNORE = shutil.ignore_patterns("tests", "__pycache__", "*.pyc", ".*")


@dataclass(frozen=True)
class Variant:
    """Platforms that get the same numba release, built from one staged manifest."""

    name: str
    """Folder name under ``build/package/``."""
    platforms: tuple[str, ...]
    """Blender platform names (``linux-x64``...), one zip each."""
    pythons: tuple[str, ...]
    """Python minor versions of the Blenders served (``"3.11"`` for 4.2-5.0, ``"3.13"`` 5.1+)."""
    numba: str
    llvmlite: str
    """llvmlite release that this numba release requires (numba pins it exactly)."""
    blender_version_max: str | None = None
    """First Blender version *not* supported (exclusive), or None for no upper bound."""
    blender_version_min: str | None = None
    """Lowest Blender version supported, or None for the root manifest's (4.2.0)."""
    suffix: str = ""
    """Added to the zip names (before ``.zip``) when packages of one platform differ by
    Blender version, e.g. ``"-blender5.1+"``; empty for one package per platform."""


VARIANTS: tuple[Variant, ...] = (
    Variant("main", ("windows-x64", "macos-arm64", "linux-x64", "linux-arm64"),
            ("3.11", "3.13"), numba="0.68.1", llvmlite="0.50.0"),
    Variant("intel-mac", ("macos-x64",), ("3.11",), numba="0.62.1", llvmlite="0.45.1",
            blender_version_max="5.0.0"),
)

# Which Blenders embed which Python: how ``--split-python`` bounds each package.
PYTHON_BLENDERS: dict[str, tuple[str, str | None, str]] = {
    "3.11": ("4.2.0", "5.1.0", "-blender4.2-5.0"),
    "3.13": ("5.1.0", None, "-blender5.1+"),
}


def split_by_python(variant: Variant) -> list[Variant]:
    """``variant`` as one variant per Python, each bounded to the Blenders embedding that
    Python: half the download per package, but two files per platform to choose from."""
    if len(variant.pythons) == 1:
        return [variant]
    split = []
    for python in variant.pythons:
        low, high, suffix = PYTHON_BLENDERS[python]
        split.append(replace(variant, name=f"{variant.name}-py{python.replace('.', '')}",
                             pythons=(python,), blender_version_min=low,
                             blender_version_max=high, suffix=suffix))
    return split


# pip's --platform for each Blender platform. pip widens these to older compatible tags
# (manylinux_2_28 accepts manylinux2014 wheels, macosx_12_0 accepts macosx_11_0), and the
# floors match what Blender itself needs: glibc 2.28 since 4.2, macOS 11+/12+.
PIP_PLATFORMS: dict[str, str] = {
    "windows-x64": "win_amd64",
    "macos-arm64": "macosx_12_0_arm64",
    "macos-x64": "macosx_10_15_x86_64",
    "linux-x64": "manylinux_2_28_x86_64",
    "linux-arm64": "manylinux_2_28_aarch64",
}


def blender_platform_of_wheel(filename: str) -> str | None:
    """The Blender platform a wheel file is built for, from its platform tag."""
    tag = filename[:-4].split("-")[-1]
    if tag.endswith("win_amd64"):
        return "windows-x64"
    if tag.startswith("macosx_"):
        return "macos-arm64" if tag.endswith("arm64") else (
            "macos-x64" if tag.endswith("x86_64") else None)
    if "linux" in tag:
        return "linux-arm64" if tag.endswith("aarch64") else (
            "linux-x64" if tag.endswith("x86_64") else None)
    return None


def cached_wheel(dist: str, version: str, python: str, platform: str,
                 cache: Path = WHEEL_CACHE) -> Path | None:
    """The cached wheel of ``dist==version`` for CPython ``python`` on ``platform``, if any."""
    tag = "cp" + python.replace(".", "")
    for path in sorted(cache.glob(f"{dist}-{version}-{tag}-*.whl")):
        if blender_platform_of_wheel(path.name) == platform:
            return path
    return None


def fetch_wheels(variant: Variant, platforms: list[str], *, offline: bool = False,
                 cache: Path = WHEEL_CACHE) -> list[Path]:
    """numba + llvmlite wheels of ``variant`` for ``platforms`` x its Pythons, from the cache,
    downloading what is missing (never numpy, never dependencies)."""
    cache.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    for platform in platforms:
        for python in variant.pythons:
            pins = {"numba": variant.numba, "llvmlite": variant.llvmlite}
            missing = [d for d, v in pins.items() if not cached_wheel(d, v, python, platform,
                                                                        cache)]
            if missing and offline:
                raise RuntimeError(f"--offline: no cached {', '.join(missing)} wheel for "
                                   f"{platform} / Python {python} in {cache}")
            if missing:
                _pip_download([f"{d}=={pins[d]}" for d in missing], python, platform, cache)
            for dist, version in pins.items():
                found = cached_wheel(dist, version, python, platform, cache)
                if found is None:
                    raise RuntimeError(f"pip found no {dist} {version} wheel for {platform} / "
                                       f"Python {python}")
                wheels.append(found)
    return wheels


def _pip_download(requirements: list[str], python: str, platform: str, cache: Path) -> None:
    # Into a temporary folder first, so an interrupted download never leaves a partial
    # wheel in the cache that later builds would take for a good one.
    print(f"  downloading {' '.join(requirements)} for {platform} / Python {python}", flush=True)
    with tempfile.TemporaryDirectory(dir=cache) as temp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--only-binary=:all:", "--platform", PIP_PLATFORMS[platform],
             "--python-version", python, "--implementation", "cp", "--dest", temp,
             *requirements],
            check=True,
        )
        for path in Path(temp).glob("*.whl"):
            shutil.move(str(path), cache / path.name)


def manifest_for(variant: Variant, platforms: list[str], wheels: list[Path],
                 template: str | None = None) -> str:
    """The text of ``blender_manifest.toml`` with this variant's platforms, wheels and version
    bound; everything else (and every comment) as written at the repository root."""
    text = MANIFEST.read_text(encoding="utf-8") if template is None else template

    def toml_list(values: list[str]) -> str:
        return "[\n" + "".join(f'  "{value}",\n' for value in values) + "]"

    for key, values in (("platforms", platforms),
                        ("wheels", [f"./wheels/{path.name}" for path in wheels])):
        # Replace the whole (possibly multi-line) array value of a top-level key.
        match = re.search(rf"^{key}\s*=\s*\[[^\]]*\]", text, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"blender_manifest.toml: no top-level `{key} = [...]`")
        text = text[:match.start()] + f"{key} = {toml_list(values)}" + text[match.end():]
    if variant.blender_version_min is not None:
        text = re.sub(r'^blender_version_min\s*=\s*"[^"]*"',
                      f'blender_version_min = "{variant.blender_version_min}"', text, count=1,
                      flags=re.MULTILINE)
    if variant.blender_version_max is not None:
        text = re.sub(r'^(blender_version_min\s*=\s*"[^"]*")',
                      rf'\1\nblender_version_max = "{variant.blender_version_max}"', text,
                      count=1, flags=re.MULTILINE)
    tomllib.loads(text)  # the staged manifest must still be valid TOML
    return text


def stage(variant: Variant, platforms: list[str], wheels: list[Path],
          stage_root: Path = STAGE_ROOT) -> Path:
    """Lay out the package source of ``variant`` (manifest, add-on, wheels) and return it."""
    stage_dir = stage_root / variant.name
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    shutil.copytree(SOURCE, stage_dir, ignore=STAGE_IGNORE)
    (stage_dir / "wheels").mkdir()
    for wheel in wheels:
        shutil.copy2(wheel, stage_dir / "wheels" / wheel.name)
    (stage_dir / "blender_manifest.toml").write_text(
        manifest_for(variant, platforms, wheels), encoding="utf-8")
    return stage_dir


def extension_tool() -> tuple[Path, Path]:
    """Blender's ``blender_ext.py`` and its tag list, from the bpy wheel of this Python."""
    spec = importlib.util.find_spec("bpy")  # locates the package without starting Blender
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("bpy is not installed in this Python: run through `build.py package`")
    bpy_dir = Path(next(iter(spec.submodule_search_locations)))
    tools = sorted(bpy_dir.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    tags = sorted(bpy_dir.glob("*/scripts/modules/_bpy_internal/extensions/tags.py"))
    if not tools or not tags:
        raise RuntimeError(f"no extension tool in {bpy_dir}")
    return tools[-1], tags[-1]


def _tool(*args: str | Path) -> None:
    tool, tags = extension_tool()
    subprocess.run([sys.executable, str(tool), *map(str, args), "--valid-tags", str(tags)],
                   check=True)


def build(platforms: list[str] | None = None, *, offline: bool = False,
          output_dir: Path = DIST, stage_root: Path = STAGE_ROOT,
          split_python: bool = False) -> list[Path]:
    """Build and validate the packages of ``platforms`` (default: all) into ``output_dir``,
    staging under ``stage_root``; return the zips. ``split_python``: one package per
    platform *and* Blender Python (see ``split_by_python``) instead of one per platform."""
    known = [p for v in VARIANTS for p in v.platforms]
    wanted = known if not platforms else platforms
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise ValueError(f"platform: unknown {unknown}, choose from {known}")
    output_dir.mkdir(parents=True, exist_ok=True)
    built: list[Path] = []
    variants = [v for variant in VARIANTS
                for v in (split_by_python(variant) if split_python else [variant])]
    for variant in variants:
        chosen = [p for p in variant.platforms if p in wanted]
        if not chosen:
            continue
        print(f"variant {variant.name}: {', '.join(chosen)} (numba {variant.numba}, Python "
              f"{', '.join(variant.pythons)})", flush=True)
        wheels = fetch_wheels(variant, chosen, offline=offline)
        stage_dir = stage(variant, chosen, wheels, stage_root)
        if precompile.host_can_build() in chosen:
            # Every zip of the variant gets it (one staged folder); the add-on uses it only
            # on the platform it was compiled for.
            precompile.add_to_stage(stage_dir, package_stem().split("-")[0], variant.numba)
        for old in _outputs(output_dir, chosen):
            old.unlink()  # so a zip found below is certainly this build's
        _tool("build", "--source-dir", stage_dir, "--output-dir", output_dir,
              "--split-platforms")
        zips = _outputs(output_dir, chosen)
        if len(zips) != len(chosen):
            raise RuntimeError(f"expected {len(chosen)} zips in {output_dir}, found {zips}")
        for index, package in enumerate(zips):
            _tool("validate", package)
            if variant.suffix:  # the tool names by platform only: keep the Pythons apart
                zips[index] = package.rename(package.with_name(package.stem + variant.suffix
                                                               + ".zip"))
        built += zips
    return built


def package_stem() -> str:
    """``<id>-<version>`` from the manifest: how every zip's name begins."""
    manifest = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    return f"{manifest['id']}-{manifest['version']}"


def _outputs(output_dir: Path, platforms: list[str]) -> list[Path]:
    stem = package_stem()
    # The tool names split packages `<id>-<version>-<platform with _ for ->.zip`.
    paths = [output_dir / f"{stem}-{p.replace('-', '_')}.zip" for p in platforms]
    return [path for path in paths if path.exists()]


def main(argv: list[str]) -> int:
    """Command-line entry: ``python -m tools.packaging [--platform P]... [--offline]``."""
    parser = argparse.ArgumentParser(prog="build.py package", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--platform", action="append", dest="platforms",
                        help="build only this Blender platform (repeatable)")
    parser.add_argument("--offline", action="store_true",
                        help="use only wheels already in the wheel cache")
    parser.add_argument("--split-python", action="store_true",
                        help="one package per platform and Blender Python (4.2-5.0, 5.1+): "
                             "half the size, two files per platform")
    parser.add_argument("--output-dir", type=Path, default=DIST)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    zips = build(args.platforms, offline=args.offline, output_dir=args.output_dir,
                 split_python=args.split_python)
    for package in zips:
        print(f"{package.relative_to(ROOT) if package.is_relative_to(ROOT) else package}  "
              f"{package.stat().st_size / 2**20:.1f} MiB")
    print(f"built and validated {len(zips)} package(s) in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
