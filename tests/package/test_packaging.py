"""``tools.packaging`` without starting Blender: the manifest, the pins, and all five zips.

Building every platform's package needs every platform's wheels (about 460 MB, fetched once
into the wheel cache); the build itself takes seconds, and each zip is validated by Blender's
own tool, so this is the test that "every package is validated".
"""

from __future__ import annotations

import shutil
import tomllib
import zipfile
from pathlib import Path

import pytest

from tools import packaging

ROOT = Path(__file__).resolve().parents[2]


def _manifest() -> dict:
    with open(ROOT / "blender_manifest.toml", "rb") as handle:
        return tomllib.load(handle)


def test_manifest_fields_blender_requires() -> None:
    manifest = _manifest()
    assert manifest["schema_version"] == "1.0.0"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert len(manifest["tagline"]) <= 64 and not manifest["tagline"].endswith(".")
    assert set(manifest["tags"]) <= {"Physics", "Animation"}
    assert "permissions" not in manifest  # nothing to declare, see the manifest's comment


def test_manifest_wheels_are_the_main_variant_pins() -> None:
    """The wheels listed at the root are one numba + one llvmlite per platform and Python of
    the main variant, at its pinned versions, and never numpy."""
    manifest, main = _manifest(), packaging.VARIANTS[0]
    assert manifest["platforms"] == list(main.platforms)
    seen = set()
    for path in manifest["wheels"]:
        name = Path(path).name
        dist, version, python = name.split("-")[:3]
        assert dist in ("numba", "llvmlite"), name
        assert version == {"numba": main.numba, "llvmlite": main.llvmlite}[dist], name
        seen.add((dist, python, packaging.blender_platform_of_wheel(name)))
    expected = {(d, "cp" + py.replace(".", ""), p) for d in ("numba", "llvmlite")
                for py in main.pythons for p in main.platforms}
    assert seen == expected and len(manifest["wheels"]) == len(expected)


def test_dev_venv_tests_the_numba_the_main_packages_bundle() -> None:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        dev = tomllib.load(handle)["project"]["optional-dependencies"]["dev"]
    main = packaging.VARIANTS[0]
    assert f"numba=={main.numba}" in dev and f"llvmlite=={main.llvmlite}" in dev


@pytest.mark.parametrize(("filename", "platform"), [
    ("numba-0.68.1-cp311-cp311-win_amd64.whl", "windows-x64"),
    ("numba-0.68.1-cp313-cp313-macosx_12_0_arm64.whl", "macos-arm64"),
    ("numba-0.62.1-cp311-cp311-macosx_10_15_x86_64.whl", "macos-x64"),
    ("llvmlite-0.50.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
     "linux-x64"),
    ("llvmlite-0.50.0-cp313-cp313-manylinux2014_aarch64.whl", "linux-arm64"),
])
def test_wheel_platform(filename: str, platform: str) -> None:
    assert packaging.blender_platform_of_wheel(filename) == platform


def test_intel_mac_manifest_is_bounded_and_keeps_the_rest() -> None:
    intel = packaging.VARIANTS[1]
    wheels = [Path("numba-0.62.1-cp311-cp311-macosx_10_15_x86_64.whl")]
    text = packaging.manifest_for(intel, ["macos-x64"], wheels)
    manifest = tomllib.loads(text)
    assert manifest["platforms"] == ["macos-x64"]
    assert manifest["wheels"] == ["./wheels/numba-0.62.1-cp311-cp311-macosx_10_15_x86_64.whl"]
    assert manifest["blender_version_max"] == "5.0.0"
    root = _manifest()
    for key in ("id", "version", "name", "tagline", "license", "tags", "build"):
        assert manifest[key] == root[key]


@pytest.mark.slow
def test_every_platform_builds_and_validates(tmp_path: Path) -> None:
    """All five zips, each validated by ``blender_ext.py validate`` inside ``build``; here:
    the layout Blender needs and only that platform's wheels in each."""
    try:
        _check_every_platform(packaging.build(output_dir=tmp_path / "dist",
                                              stage_root=tmp_path / "stage"))
    finally:  # 470 MB of zips: don't leave them in pytest's kept temporary folders
        shutil.rmtree(tmp_path / "dist", ignore_errors=True)
        shutil.rmtree(tmp_path / "stage", ignore_errors=True)


def _check_every_platform(zips: list[Path]) -> None:
    by_platform = {z.name.rsplit("-", 1)[1][:-4].replace("_", "-"): z for z in zips}
    assert sorted(by_platform) == sorted(p for v in packaging.VARIANTS for p in v.platforms)
    for platform, package in by_platform.items():
        with zipfile.ZipFile(package) as archive:
            names = archive.namelist()
            manifest = tomllib.loads(archive.read("blender_manifest.toml").decode())
        assert "__init__.py" in names and "core/__init__.py" in names
        assert "core/kernel_manifest.json" in names  # the first-use compile helper's list
        assert not [n for n in names if "tests/" in n or "__pycache__" in n or n.endswith(".pyc")]
        wheels = [n for n in names if n.endswith(".whl")]
        assert {packaging.blender_platform_of_wheel(w) for w in wheels} == {platform}
        assert not [w for w in wheels if Path(w).name.startswith("numpy")]
        variant = next(v for v in packaging.VARIANTS if platform in v.platforms)
        assert len(wheels) == 2 * len(variant.pythons)
        generated = manifest["build"]["generated"]
        assert generated["platforms"] == [platform]
        assert manifest.get("blender_version_max") == variant.blender_version_max


INSTALL = """
import json, os, sys
import bpy
repo = next(r for r in bpy.context.preferences.extensions.repos if r.module == "user_default")
results = {}
for path in sys.argv[1:]:
    # A refused package still returns FINISHED (Blender prints why): look on disk instead.
    bpy.ops.extensions.package_install_files(filepath=path, repo="user_default",
                                             enable_on_install=False)
    installed = os.path.isdir(os.path.join(repo.directory, "xpbd_rope"))
    results[path] = installed
    if installed:
        bpy.ops.extensions.package_uninstall(repo_directory=repo.directory, pkg_id="xpbd_rope")
print("RESULT " + json.dumps(results))
"""


@pytest.mark.blender
def test_split_python_packages_install_only_on_their_blenders(tmp_path: Path) -> None:
    """``--split-python``: each linux-x64 zip carries one Python's wheels and Blender itself
    refuses the one meant for the other Python's Blenders."""
    import json
    import subprocess
    import sys

    from .conftest import blender_env

    zips = packaging.build(["linux-x64"], output_dir=tmp_path / "dist",
                           stage_root=tmp_path / "stage", split_python=True)
    shutil.rmtree(tmp_path / "stage")
    names = sorted(z.name for z in zips)
    assert names == [f"{packaging.package_stem()}-linux_x64-blender4.2-5.0.zip",
                     f"{packaging.package_stem()}-linux_x64-blender5.1+.zip"]
    done = subprocess.run([sys.executable, "-c", INSTALL, *map(str, sorted(zips))],
                          env=blender_env(tmp_path / "user"), capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    results = {Path(k).name: v for k, v in json.loads(lines[-1][7:]).items()}
    mine = "blender5.1+" if sys.version_info >= (3, 13) else "blender4.2-5.0"
    assert results == {name: mine in name for name in names}, results


def test_offline_build_needs_only_the_wheel_cache(tmp_path: Path) -> None:
    """``--offline`` never calls pip: with an empty cache it says what is missing; with the
    wheels cached (by the builds above, or fetched here) it builds."""
    empty = tmp_path / "empty-cache"
    with pytest.raises(RuntimeError, match="--offline: no cached"):
        packaging.fetch_wheels(packaging.VARIANTS[0], ["linux-x64"], offline=True, cache=empty)
    packaging.fetch_wheels(packaging.VARIANTS[0], ["linux-x64"])  # fills the cache if needed
    zips = packaging.build(["linux-x64"], offline=True, output_dir=tmp_path / "dist",
                           stage_root=tmp_path / "stage")
    assert [z.name for z in zips] == [f"{packaging.package_stem()}-linux_x64.zip"]
    shutil.rmtree(tmp_path / "dist")
    shutil.rmtree(tmp_path / "stage")
