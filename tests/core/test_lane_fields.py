"""The lane buffer's fields are declared once (``layout.topology.PARTICLE_FIELDS`` and
``EDGE_FIELDS``): their offsets and strides come from the declaration, and every declared
field is read or written by name in the code (a field nothing uses is dead layout)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xpbd_addon.core.layout import lanes, topology

CORE = Path(topology.__file__).parent.parent
LAYOUT_FILES = {"layout/topology.py", "layout/lanes.py"}


@pytest.mark.parametrize("kind, fields, stride",
                         [("PARTICLE", topology.PARTICLE_FIELDS, topology.PARTICLE_STRIDE),
                          ("EDGE", topology.EDGE_FIELDS, topology.EDGE_STRIDE)])
def test_offsets_and_strides_come_from_the_declaration(kind, fields, stride):
    at = 0
    for name, width, meaning in fields:
        assert getattr(topology, f"{kind}_{name}") == at, name
        assert width > 0 and meaning
        at += width
    assert stride == at


def _aliases() -> dict[str, set[str]]:
    """Each layout constant's names: its own and the lanes module's unsigned alias."""
    names: dict[str, set[str]] = {}
    for kind, fields in (("PARTICLE", topology.PARTICLE_FIELDS),
                         ("EDGE", topology.EDGE_FIELDS)):
        for name, _width, _meaning in fields:
            names[f"{kind}_{name}"] = {f"{kind}_{name}"}
    source = Path(lanes.__file__).read_text()
    for alias, constant in re.findall(r"^(\w+) = np\.uint64\((\w+)\)", source, re.M):
        if constant in names:
            names[constant].add(alias)
    return names


def test_every_declared_field_is_used_by_name():
    code = "\n".join(path.read_text() for path in CORE.rglob("*.py")
                     if path.relative_to(CORE).as_posix() not in LAYOUT_FILES)
    unused = [constant for constant, names in _aliases().items()
              if not any(re.search(rf"\b{name}\b", code) for name in names)]
    assert unused == []
