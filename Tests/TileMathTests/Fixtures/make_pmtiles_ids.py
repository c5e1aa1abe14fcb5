#!/usr/bin/env python3
"""Writes pmtiles_ids.json for TileIDHilbertTests: [z, x, y, id] with the PMTiles tile id that the
`pmtiles` package (an independent implementation of PMTiles v3) gives, for every tile of zooms
0-4 and 300 seeded random tiles of zooms 5-26.

    python3 -m venv v && v/bin/pip install pmtiles && v/bin/python make_pmtiles_ids.py
"""
import json
import os
import random
from pmtiles.tile import zxy_to_tileid

rng = random.Random(26)
tiles = [(z, x, y) for z in range(5) for x in range(1 << z) for y in range(1 << z)]
for _ in range(300):
    z = rng.randint(5, 26)
    tiles.append((z, rng.randrange(1 << z), rng.randrange(1 << z)))
tiles += [(26, (1 << 26) - 1, (1 << 26) - 1), (26, 0, 0)]
rows = [[z, x, y, zxy_to_tileid(z, x, y)] for z, x, y in tiles]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pmtiles_ids.json"), "w") as f:
    json.dump(rows, f, separators=(",", ":"))
    f.write("\n")
