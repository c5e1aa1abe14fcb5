#!/usr/bin/env python3
"""Writes the oracle tile covers that TileMathTests compares TileCover against, tile for tile.

    python3 make_covers.py      # rewrites bbox_covers.json and polygon_covers.json here

bbox_covers.json    - mercantile.tiles() for bounding boxes (cities, world, antimeridian, random).
polygon_covers.json - an exact oracle with shapely: a tile is covered iff the interior of the tile
                      square meets the interior of the union of the polygons (holes excluded),
                      with vertices projected to fractional tile coordinates by MapLibre's formula
                      and edges straight in tile space, as MapLibre's scan-line draws them.
                      (supermercado is not used: it rasterises with all_touched, which also takes
                      tiles that the boundary merely touches.)

Covers are stored per zoom as columns: [x, y0, y1, y0, y1, ...] with half-open row ranges.
"""
import json
import math
import os
import random

import mercantile
import shapely
from shapely.geometry import MultiPolygon, Polygon, box
from shapely.ops import unary_union

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_LAT = 85.051128779806604

CITIES = {
    "new-york": (-74.28127, 40.48398, -73.58442, 40.98701),
    "london": (-0.1278, 51.4874, -0.0978, 51.5174),
    "paris": (2.3522, 48.8366, 2.3822, 48.8666),
}


def runs(tiles):
    """Column-run encoding of a set of (x, y)."""
    columns = {}
    for x, y in tiles:
        columns.setdefault(x, []).append(y)
    out = []
    for x in sorted(columns):
        ys = sorted(set(columns[x]))
        row = [x]
        start = prev = ys[0]
        for y in ys[1:]:
            if y != prev + 1:
                row += [start, prev + 1]
                start = y
            prev = y
        row += [start, prev + 1]
        out.append(row)
    return out


def bbox_cases():
    rng = random.Random(20240601)
    cases = [(name, bb, range(0, 17)) for name, bb in CITIES.items()]
    cases.append(("world", (-180.0, -90.0, 180.0, 90.0), range(0, 6)))
    cases.append(("fiji-antimeridian", (177.0, -19.5, -178.0, -15.5), range(0, 11)))
    cases.append(("pacific-antimeridian-wide", (150.0, -30.0, -150.0, 10.0), range(0, 8)))
    cases.append(("arctic-clamped", (-20.0, 80.0, 40.0, 89.9), range(0, 7)))
    cases.append(("antarctic-clamped", (-10.0, -89.0, 10.0, -80.0), range(0, 7)))
    for i in range(12):
        w = rng.uniform(-179.0, 170.0)
        s = rng.uniform(-80.0, 75.0)
        size = 10 ** rng.uniform(-3.5, 1.0)
        e = min(w + size * rng.uniform(0.5, 2.0), 179.999)
        n = min(s + size, 85.0)
        cases.append((f"random-{i}", (w, s, e, n), range(0, 17)))
    result = []
    for name, (w, s, e, n), zooms in cases:
        per_zoom = {}
        for z in zooms:
            tiles = [(t.x, t.y) for t in mercantile.tiles(w, s, e, n, [z])]
            if len(tiles) > 40000:
                break
            per_zoom[str(z)] = runs(tiles)
        result.append({"name": name, "bbox": [w, s, e, n], "zooms": per_zoom})
    return result


def tile_xy(lng, lat, z):
    """MapLibre's Projection::project, in the same operation order as WebMercator.swift."""
    n = float(1 << z)
    lat = min(max(lat, -MAX_LAT), MAX_LAT)
    x = (180.0 + lng) / 360.0 * n
    merc = math.log(math.tan(math.pi / 4.0 + lat * math.pi / 360.0)) * 180.0 / math.pi
    y = (180.0 - merc) / 360.0 * n
    return x, min(max(y, 0.0), n)


def exact_cover(polygons, z):
    """Tiles whose open square meets the interior of the union of the polygons."""
    n = 1 << z
    shapes = []
    for rings in polygons:
        projected = [[tile_xy(lng, lat, z) for lng, lat in ring] for ring in rings]
        shapes.append(Polygon(projected[0], projected[1:]).buffer(0))
    area = unary_union(shapes)
    if area.is_empty:
        return []
    minx, miny, maxx, maxy = area.bounds
    boxes, ids = [], []
    for x in range(math.floor(minx), math.ceil(maxx)):
        for y in range(max(math.floor(miny), 0), min(math.ceil(maxy), n)):
            boxes.append(box(x, y, x + 1, y + 1))
            ids.append((x, y))
    hits = shapely.relate_pattern(boxes, area, "T********")
    return sorted({(x % n, y) for (x, y), hit in zip(ids, hits) if hit})


def star(rng, cx, cy, radius, count):
    points = []
    for i in range(count):
        angle = 2 * math.pi * i / count
        r = radius * rng.uniform(0.35, 1.0)
        points.append((cx + r * math.cos(angle), cy + 0.7 * r * math.sin(angle)))
    return points


def polygon_cases():
    rng = random.Random(7)
    europe = [
        [(5.09765625, 53.067626642387374), (2.373046875, 43.389081939117496),
         (-4.74609375, 48.45835188280866), (-1.494140625, 37.09023980307208),
         (22.587890625, 36.24427318493909), (31.640625, 46.13417004624326),
         (17.841796875, 54.7246201949245), (5.09765625, 53.067626642387374)],
        [(19.6875, 49.66762782262194), (22.8515625, 43.51668853502906),
         (13.623046875, 45.089035564831036), (16.34765625, 39.095962936305476),
         (5.185546875, 41.244772343082076), (8.701171874999998, 50.233151832472245),
         (19.6875, 49.66762782262194)],
    ]
    asia = [[(59.150390625, 45.460130637921004), (65.126953125, 41.11246878918088),
             (69.169921875, 47.45780853075031), (63.896484375, 50.064191736659104),
             (59.150390625, 45.460130637921004)]]
    san_francisco = [[
        (-122.5143814086914, 37.779127216982424), (-122.50811576843262, 37.72721239056709),
        (-122.50313758850099, 37.70820178063929), (-122.3938751220703, 37.707454835665274),
        (-122.37567901611328, 37.70663997801684), (-122.36297607421874, 37.71343018466285),
        (-122.354736328125, 37.727280276860036), (-122.36469268798828, 37.73868429065797),
        (-122.38014221191408, 37.75442980295571), (-122.38391876220702, 37.78753873820529),
        (-122.35919952392578, 37.8065289741725), (-122.35679626464844, 37.820632846207864),
        (-122.3712158203125, 37.835276322922695), (-122.3818588256836, 37.82958198283902),
        (-122.37190246582031, 37.80788523279169), (-122.38735198974608, 37.791337175930686),
        (-122.40966796874999, 37.812767557570204), (-122.46425628662108, 37.807071480609274),
        (-122.46803283691405, 37.810326435534755), (-122.47901916503906, 37.81168262440736),
        (-122.48966217041016, 37.78916666399649), (-122.50579833984375, 37.78781006166096),
        (-122.5143814086914, 37.779127216982424)]]
    # Hole wound the same way as the outer ring: still a hole.
    same_winding = [
        [(-10.0, -10.0), (10.0, -10.0), (10.0, 10.0), (-10.0, 10.0)],
        [(-5.0, -5.0), (5.0, -5.0), (5.0, 5.0), (-5.0, 5.0)],
    ]
    # Edges exactly on tile boundaries: x = -90, 0, 45 and y = 0 are integers from z2/z3 up.
    on_boundaries = [[(-90.0, 0.0), (0.0, 0.0), (0.0, 20.0), (45.0, 20.0), (45.0, 40.0), (-90.0, 40.0)]]
    # A thin spike whose span in one row nests inside a neighbour's.
    spike = [[(0.1, 0.1), (30.3, 0.2), (0.2, 0.4), (0.3, 10.1), (-0.3, 10.0)]]
    antimeridian = [[(170.0, -20.0), (190.0, -25.0), (185.0, -5.0), (172.0, -8.0)]]
    cases = [
        ("maplibre-polygon-with-hole", [europe], range(0, 11)),
        ("maplibre-multipolygon", [[europe[0]], asia], range(0, 11)),
        ("maplibre-san-francisco", [san_francisco], range(0, 15)),
        ("hole-same-winding", [same_winding], range(0, 10)),
        ("edges-on-tile-boundaries", [on_boundaries], range(0, 9)),
        ("nested-spike", [spike], range(0, 10)),
        ("antimeridian-unwrapped", [antimeridian], range(0, 9)),
        ("overlapping-multipolygon", [[star(rng, 10.0, 45.0, 4.0, 11)], [star(rng, 12.0, 46.0, 4.0, 9)]],
         range(0, 11)),
    ]
    for i in range(4):
        cx, cy = rng.uniform(-150, 150), rng.uniform(-60, 60)
        outer = star(rng, cx, cy, rng.uniform(0.5, 5.0), rng.randint(5, 40))
        hole = list(reversed(star(rng, cx, cy, 0.3 * rng.uniform(0.2, 0.5), 7)))
        cases.append((f"random-star-{i}", [[outer, hole]], range(0, 13)))
    result = []
    for name, polygons, zooms in cases:
        per_zoom = {}
        for z in zooms:
            tiles = exact_cover(polygons, z)
            if len(tiles) > 30000:
                break
            per_zoom[str(z)] = runs(tiles)
        result.append({
            "name": name,
            "polygons": [[[[lng, lat] for lng, lat in ring] for ring in rings] for rings in polygons],
            "zooms": per_zoom,
        })
    return result


def write(name, cases, oracle):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump({"generator": "make_covers.py", "oracle": oracle, "cases": cases}, f,
                  separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    write("bbox_covers.json", bbox_cases(), f"mercantile {mercantile.__version__}")
    write("polygon_covers.json", polygon_cases(), f"shapely {shapely.__version__} interior/interior")
