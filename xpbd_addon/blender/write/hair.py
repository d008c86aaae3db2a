"""Where the writer of hair ``Curves`` objects goes (``Object.type == "CURVES"``, Blender's
hair and new curves): not simulated yet.

Such a writer is a class with the members of ``kinds.Writer`` and an entry in
``kinds.WRITERS``. Its points are ``Curves.attributes["position"]`` (float32 [N, 3], read and
written in bulk with ``foreach_get`` / ``foreach_set``, as a mesh's), its strands
``Curves.curve_offset_data`` (the first point of each), so its ``Layout`` is the chains of
those strands; after writing, ``Curves.update_tag()``.
"""
