#!/usr/bin/env python3
"""The graph tiles an area meets, by shapely: the oracle for RoutingGraph's GraphTileCover.

Reads {"tileSize": degrees, "cases": [{"polygons": [[ring, hole, ...], ...]}, ...]} on stdin (rings
as [[lng, lat], ...]) and prints, per case, the sorted tile indexes of the cells the area meets with
half-open cells: a cell [w, w+s) x [s, s+s) is in when the closed area has a point in it, that is
when the area meets the closed cell anywhere but only on its east or north edge (the world's own
east and north edges excepted, which belong to the last column and row). Also prints, per case, the
cells `valhalla_build_extract --geojson-dir` would take (shapely's closed `intersects`).
"""
import json
import math
import sys

from shapely.geometry import LineString, Polygon, box
from shapely.ops import unary_union


def main():
    request = json.load(sys.stdin)
    size = request["tileSize"]
    columns, rows = round(360 / size), round(180 / size)
    answers = []
    for case in request["cases"]:
        area = unary_union([Polygon(rings[0], rings[1:]) for rings in case["polygons"]])
        west, south, east, north = area.bounds
        first_column = max(math.floor((west + 180) / size) - 1, 0)
        last_column = min(math.floor((east + 180) / size) + 1, columns - 1)
        first_row = max(math.floor((south + 90) / size) - 1, 0)
        last_row = min(math.floor((north + 90) / size) + 1, rows - 1)
        half_open, closed = [], []
        for row in range(first_row, last_row + 1):
            for column in range(first_column, last_column + 1):
                x0, y0 = column * size - 180, row * size - 90
                x1, y1 = x0 + size, y0 + size
                cell = box(x0, y0, x1, y1)
                if not area.intersects(cell):
                    continue
                index = row * columns + column
                closed.append(index)
                edges = []
                if column < columns - 1:
                    edges.append(LineString([(x1, y0), (x1, y1)]))
                if row < rows - 1:
                    edges.append(LineString([(x0, y1), (x1, y1)]))
                rest = area.intersection(cell)
                if edges:
                    rest = rest.difference(unary_union(edges))
                if not rest.is_empty:
                    half_open.append(index)
        answers.append({"halfOpen": sorted(half_open), "closed": sorted(closed), "valid": [int(area.is_valid)]})
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
