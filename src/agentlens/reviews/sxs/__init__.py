"""Side-by-side reviews of two runs on the same tasks (spec §8, §9)."""
