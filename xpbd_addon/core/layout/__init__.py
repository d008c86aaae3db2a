"""How a particle graph is laid out for the kernels: its chains (ropes) and the rest
(``topology``), the lane buffers' fields as the kernels index them (``lanes``)."""
