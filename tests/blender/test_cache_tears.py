"""The pieces a torn rope falls into in a point cache (``blender/bake/cache_tears.py``)."""

from __future__ import annotations

import numpy as np

from xpbd_addon.blender.bake import cache_tears


def _spline_edges(start, n, cyclic):
    edges = [(start + i, start + i + 1) for i in range(n - 1)]
    return edges + ([(start + n - 1, start)] if cyclic else [])


def _pieces(splines, cyclic, torn_edges):
    edges = np.array([e for (s, n), c in zip(splines, cyclic, strict=True)
                      for e in _spline_edges(s, n, c)])
    torn = np.array([tuple(e) in torn_edges for e in edges.tolist()])
    count = sum(n for _s, n in splines)
    cut = cache_tears.cut_after(edges, torn, count)
    order, sizes, closed = cache_tears.curve_pieces(splines, np.array(cyclic), cut)
    out, at = [], 0
    for size in sizes:
        out.append(order[at:at + size].tolist())
        at += size
    return out, closed


def test_an_open_spline_falls_apart_at_each_tear():
    assert _pieces([(0, 5)], [False], set()) == ([[0, 1, 2, 3, 4]], [False])
    assert _pieces([(0, 5)], [False], {(1, 2)}) == ([[0, 1], [2, 3, 4]], [False, False])
    assert _pieces([(0, 3), (3, 4)], [False, False], {(0, 1), (5, 6)}) == (
        [[0], [1, 2], [3, 4, 5], [6]], [False] * 4)


def test_a_cyclic_spline_opens_at_its_tear_and_falls_apart_at_the_others():
    assert _pieces([(0, 6)], [True], set()) == ([[0, 1, 2, 3, 4, 5]], [True])
    assert _pieces([(0, 6)], [True], {(2, 3)}) == ([[3, 4, 5, 0, 1, 2]], [False])
    assert _pieces([(0, 6)], [True], {(5, 0)}) == ([[0, 1, 2, 3, 4, 5]], [False])
    assert _pieces([(0, 6)], [True], {(1, 2), (4, 5)}) == ([[5, 0, 1], [2, 3, 4]],
                                                          [False, False])


def test_a_tube_loses_the_faces_of_its_torn_links_only():
    chains = [np.arange(0, 4), np.arange(4, 7)]
    cut = np.zeros(7, dtype=bool)
    cut[1] = True  # the link 1-2 of the first chain
    kept = cache_tears.tube_faces_kept(chains, cut, sides=3)
    assert kept.tolist() == [True] * 3 + [False] * 3 + [True] * 3 + [True] * 6
