"""Data types: a grid point of a suite, what one measured case recorded, a load file."""
