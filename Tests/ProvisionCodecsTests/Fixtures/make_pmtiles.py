#!/usr/bin/env python3
"""Writes leafy.pmtiles with the `pmtiles` package's writer (an independent implementation of
PMTiles v3), for PMTilesTests:

- every tile of zooms 0-6 (5,461): a tile's bytes are b"tile <id>" with its PMTiles id, except the
  64 tiles of zoom 6 with x = 0, whose bytes are all b"ocean" (a deduplicated run);
- 12,000 tiles of zoom 12 at ids with random gaps (seeded), each b"blob <id mod 251>": contents
  shared out of order, so offsets jump back and the directory does not compress into 16 KiB, and
  the writer makes leaf directories.

    python3 -m venv v && v/bin/pip install pmtiles && v/bin/python make_pmtiles.py
"""
import os
import random
from pmtiles.tile import zxy_to_tileid, TileType, Compression
from pmtiles.writer import Writer

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "leafy.pmtiles"), "wb") as f:
    writer = Writer(f)
    ids = sorted(zxy_to_tileid(z, x, y) for z in range(7) for x in range(1 << z) for y in range(1 << z))
    ocean = {zxy_to_tileid(6, 0, y) for y in range(64)}
    for tile_id in ids:
        writer.write_tile(tile_id, b"ocean" if tile_id in ocean else b"tile %d" % tile_id)
    rng = random.Random(12)
    tile_id = zxy_to_tileid(12, 0, 0)
    for _ in range(12000):
        tile_id += rng.randint(1, 400)
        writer.write_tile(tile_id, b"blob %d" % (tile_id % 251))
    writer.finalize(
        {
            "tile_type": TileType.UNKNOWN,
            "tile_compression": Compression.NONE,
            "min_zoom": 0, "max_zoom": 12,
            "min_lon_e7": -1800000000, "min_lat_e7": -850511287,
            "max_lon_e7": 1800000000, "max_lat_e7": 850511287,
            "center_zoom": 3, "center_lon_e7": 23456789, "center_lat_e7": -12345678,
        },
        {"name": "leafy"},
    )
