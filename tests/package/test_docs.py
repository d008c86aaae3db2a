"""The README and docs work on a fresh clone with nothing beside it (issue 16): every relative
link resolves to a file the repository tracks (and a heading of it, for ``#anchors``), and no
tracked file points outside the repository (``shared/`` was a folder beside the project that
a clone does not have)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _tracked() -> set[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return {name for name in done.stdout.decode().split("\0") if name}


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.+?)\s*$", text, re.MULTILINE)}


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.fixture(scope="module")
def tracked() -> set[str]:
    try:
        return _tracked()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.name)
def test_every_relative_link_resolves_to_a_tracked_file(document: Path,
                                                        tracked: set[str]) -> None:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        path = (document.parent / path_part).resolve() if path_part else document
        relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else None
        if relative is None or (relative not in tracked and not any(
                name.startswith(relative + "/") for name in tracked)):
            broken.append(f"{target} (no such file in the repository)")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target} (no heading #{anchor})")
    assert not broken, f"{document.name}: " + ", ".join(broken)


def test_no_tracked_file_points_outside_the_repository(tracked: set[str]) -> None:
    outside = []
    for name in sorted(tracked):
        path = ROOT / name
        if path.suffix not in {".md", ".py", ".toml", ".txt", ".cfg", ""} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if name == "tests/package/test_docs.py":
            continue
        for needle in ("shared/", "../shared", "xpbd-seed"):
            if needle in text:
                outside.append(f"{name}: {needle}")
    assert not outside, outside


def test_the_readme_shows_the_demo_picture(tracked: set[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/images/demo.png)" in readme
    assert "docs/images/demo.png" in tracked
