"""What we know: the GPU catalog, model presets, providers and prices, and name resolution."""
