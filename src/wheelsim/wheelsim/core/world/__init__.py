"""The world around the vehicle: occupancy map, laser ray casting, footprint and collisions."""
