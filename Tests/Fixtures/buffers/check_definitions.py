#!/usr/bin/env python3
"""Checks region definitions written to offline.db with an independent implementation (shapely).

    check_definitions.py CASES.json

CASES.json is a list of {"name", "metres" (0 for no buffer), "input" (the region's GeoJSON
geometry before the buffer), "definition" (the region definition JSON as stored)}. For each case it prints one JSON
line: whether the stored geometry is valid (GEOS is_valid, with explain_validity when not), how
many points within the buffer distance were sampled and how many of them the stored geometry
misses, and its vertex count. Points are sampled on the sphere of the Earth's mean radius at
99.5% of the distance from points along the input (lines and rings interpolated in Web Mercator,
where covers draw them straight), at 72 bearings, plus the input's own vertices and, for
polygons, a grid of points inside them; containment is tested in Web Mercator, where the stored
edges are straight.
"""
import json
import math
import sys

from shapely.geometry import Point, shape
from shapely.ops import transform
from shapely.validation import explain_validity

R = 6371008.8
MAX_LAT = 85.051128779806604


def mercator(lng, lat, *rest):
    lat = max(-MAX_LAT, min(MAX_LAT, lat))
    x = (lng + 180.0) / 360.0
    y = (1 - math.log(math.tan(math.radians(lat)) + 1 / math.cos(math.radians(lat))) / math.pi) / 2
    return x, y


def unmercator(x, y):
    lng = x * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y))))
    return lng, lat


def destination(lng, lat, metres, bearing):
    d = metres / R
    la1, lo1, b = math.radians(lat), math.radians(lng), math.radians(bearing)
    la2 = math.asin(math.sin(la1) * math.cos(d) + math.cos(la1) * math.sin(d) * math.cos(b))
    lo2 = lo1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(la1), math.cos(d) - math.sin(la1) * math.sin(la2))
    return math.degrees(lo2), math.degrees(la2)


def haversine(a, b):
    la1, la2 = math.radians(a[1]), math.radians(b[1])
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin(math.radians(b[0] - a[0]) / 2) ** 2
    return 2 * R * math.asin(min(1, math.sqrt(h)))


def along(line, step):
    """Points along a path, interpolated in Web Mercator, at most `step` metres apart."""
    out = [tuple(line[0][:2])]
    for a, b in zip(line, line[1:]):
        n = max(1, int(math.ceil(haversine(a, b) / step)))
        (xa, ya), (xb, yb) = mercator(*a[:2]), mercator(*b[:2])
        for k in range(1, n + 1):
            t = k / n
            out.append(unmercator(xa + (xb - xa) * t, ya + (yb - ya) * t))
    return out


def paths(geometry):
    kind, c = geometry["type"], geometry["coordinates"]
    if kind == "Point":
        return [[c]]
    if kind in ("MultiPoint", "LineString"):
        return [c] if kind == "LineString" else [[p] for p in c]
    if kind in ("MultiLineString", "Polygon"):
        return c
    if kind == "MultiPolygon":
        return [ring for polygon in c for ring in polygon]
    raise ValueError(kind)


def samples(geometry, metres):
    points = []
    for line in paths(geometry):
        for lng, lat in along(line, metres / 4 if metres > 0 else 50) if len(line) > 1 else [tuple(line[0][:2])]:
            points.append((lng, lat))
            for k in range(72 if metres > 0 else 0):
                points.append(destination(lng, lat, metres * 0.995, k * 5.0))
    if geometry["type"] in ("Polygon", "MultiPolygon"):
        parts = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        for part in parts:
            shell = shape({"type": "Polygon", "coordinates": part})
            west, south, east, north = shell.bounds
            for i in range(1, 20):
                for j in range(1, 20):
                    p = (west + (east - west) * i / 20, south + (north - south) * j / 20)
                    if shell.contains(Point(p)):
                        points.append(p)
    return points


def main():
    cases = json.load(open(sys.argv[1]))
    for case in cases:
        definition = json.loads(case["definition"])
        geometry = definition["geometry"]
        stored = shape(geometry)
        projected = transform(lambda x, y, z=None: mercator(x, y), stored)
        points = samples(case["input"], case["metres"])
        missed = [p for p in points if not projected.covers(Point(mercator(*p)))]
        vertices = sum(len(ring) for polygon in geometry["coordinates"] for ring in polygon) \
            if geometry["type"] == "MultiPolygon" else sum(len(ring) for ring in geometry["coordinates"])
        print(json.dumps({
            "name": case["name"], "type": geometry["type"], "valid": stored.is_valid,
            "validity": explain_validity(stored), "projectedValid": projected.is_valid,
            "sampled": len(points), "missed": len(missed), "firstMissed": missed[:3], "vertices": vertices,
        }))


if __name__ == "__main__":
    main()
