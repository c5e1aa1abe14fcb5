#!/usr/bin/env python3
"""Deterministic soak fixture: hand-encoded MVT tiles, a style and a TileJSON.

    fixture.py OUT_DIR

Writes OUT_DIR/tiles/{z}/{x}/{y}.pbf for every tile of the cover of BBOX at ZOOMS (as
mercantile computes it, which provision's planner agrees with), OUT_DIR/style.json,
OUT_DIR/tilejson.json and OUT_DIR/manifest.json (the tile list with sha256 of each payload).
The canonical URLs point at https://soak.example.invalid/ ; the job maps that prefix to the
fault server, so the store never records the server's port.
"""
import hashlib
import json
import os
import random
import sys

import mercantile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pbwire import field_bytes, int_value, key, string_value, varint, zigzag  # noqa: E402

SEED = 20240501
CANONICAL = "https://soak.example.invalid/"
# Cover of this bbox at zooms 9..14: 5,401 tiles (checked against `provision plan --json`).
BBOX = [12.8, 52.2, 14.3, 52.95]
ZOOMS = range(9, 15)
EXTENT = 4096


def packed(field, values):
    return field_bytes(field, b"".join(varint(v) for v in values))


def command(cmd, count):
    return (count << 3) | (cmd & 7)


def geometry(kind, points):
    """MVT geometry commands for a point (1), linestring (2) or polygon (3) in tile coordinates."""
    out, cx, cy = [], 0, 0
    for index, (x, y) in enumerate(points):
        if index == 0:
            out.append(command(1, 1))  # MoveTo
        elif index == 1:
            out.append(command(2, len(points) - 1))  # LineTo
        out += [zigzag(x - cx), zigzag(y - cy)]
        cx, cy = x, y
    if kind == 3:
        out.append(command(7, 1))  # ClosePath
    return out


def feature(fid, kind, points, tags):
    return (key(1, 0) + varint(fid) + packed(2, tags) + key(3, 0) + varint(kind)
            + packed(4, geometry(kind, points)))


def tile_bytes(z, x, y):
    rng = random.Random(f"{SEED}/{z}/{x}/{y}")
    keys = [b"name", b"rank"]
    values = [string_value(f"t{z}-{x}-{y}"), int_value(rng.randrange(1, 100))]
    features = []
    px, py = rng.randrange(EXTENT), rng.randrange(EXTENT)
    features.append(feature(1, 1, [(px, py)], [0, 0, 1, 1]))
    line = [(rng.randrange(EXTENT), rng.randrange(EXTENT)) for _ in range(rng.randrange(2, 6))]
    features.append(feature(2, 2, line, [1, 1]))
    ox, oy, s = rng.randrange(EXTENT // 2), rng.randrange(EXTENT // 2), rng.randrange(64, EXTENT // 2)
    features.append(feature(3, 3, [(ox, oy), (ox + s, oy), (ox + s, oy + s), (ox, oy + s)], [0, 0]))
    layer = (key(15, 0) + varint(2) + field_bytes(1, b"soak")
             + b"".join(field_bytes(2, f) for f in features)
             + b"".join(field_bytes(3, k) for k in keys)
             + b"".join(field_bytes(4, v) for v in values)
             + key(5, 0) + varint(EXTENT))
    return field_bytes(3, layer)


def cover():
    return sorted((t.z, t.x, t.y) for t in mercantile.tiles(*BBOX, zooms=list(ZOOMS)))


def main(out):
    tiles = cover()
    manifest = {"bbox": BBOX, "zoom": [ZOOMS.start, ZOOMS.stop - 1], "canonical": CANONICAL,
                "template": CANONICAL + "tiles/{z}/{x}/{y}.pbf", "tiles": {}}
    for z, x, y in tiles:
        data = tile_bytes(z, x, y)
        path = os.path.join(out, "tiles", str(z), str(x))
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, f"{y}.pbf"), "wb") as f:
            f.write(data)
        manifest["tiles"][f"{z}/{x}/{y}"] = hashlib.sha256(data).hexdigest()
    tilejson = {
        "tilejson": "3.0.0", "name": "Soak", "scheme": "xyz",
        "tiles": [manifest["template"]], "minzoom": 0, "maxzoom": 14,
        "bounds": [-180, -85.0511, 180, 85.0511],
        "vector_layers": [{"id": "soak", "fields": {"name": "String", "rank": "Number"}}],
    }
    style = {
        "version": 8, "name": "Soak",
        "sources": {"soak": {"type": "vector", "url": CANONICAL + "tilejson.json"}},
        "layers": [
            {"id": "background", "type": "background", "paint": {"background-color": "#ffffff"}},
            {"id": "fill", "type": "fill", "source": "soak", "source-layer": "soak",
             "paint": {"fill-color": "#88aacc"}},
            {"id": "line", "type": "line", "source": "soak", "source-layer": "soak",
             "paint": {"line-color": "#334455"}},
        ],
    }
    for name, doc in (("tilejson.json", tilejson), ("style.json", style), ("manifest.json", manifest)):
        with open(os.path.join(out, name), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
    print(len(tiles))


if __name__ == "__main__":
    main(sys.argv[1])
