// manifold (being written)
