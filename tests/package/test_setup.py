"""``build.py`` set-up tells the truth: the Python it needs, checked before anything is
installed, and a ``.venv`` that cannot work named with the command to delete it (issue 16:
Python 3.12 used to fail inside pip with a traceback, and the broken ``.venv`` was reused)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import build


def test_a_missing_python_is_named_with_what_to_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    with pytest.raises(build.SetupError) as error:
        build.ensure_venv(venv, [], minor="3.99")
    assert "Python 3.99" in str(error.value) and "pyenv install 3.99" in str(error.value)
    assert not venv.exists(), "something was created before the check"


def test_a_venv_without_python_is_named_with_the_command_to_delete_it(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    with pytest.raises(build.SetupError) as error:
        build.ensure_venv(venv, [])
    assert "has no Python" in str(error.value)
    assert f"rm -rf {venv}" in str(error.value)
    assert venv.exists(), "never deleted by build.py (it may be a shared environment)"


def test_a_venv_of_another_python_is_refused_before_pip_runs(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    with pytest.raises(build.SetupError) as error:
        build.ensure_venv(venv, ["no-such-package-is-installed"], minor="3.99")
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"it is Python {here}, and Python 3.99 is needed" in str(error.value)
    assert not (venv / ".requirements-stamp").exists()


def test_the_readme_commands_are_build_commands() -> None:
    readme = (build.ROOT / "README.md").read_text(encoding="utf-8")
    for command in ("python3 build.py demo", "python3 build.py test"):
        assert command in readme
    assert {"demo", "test"} <= set(build.COMMANDS)
