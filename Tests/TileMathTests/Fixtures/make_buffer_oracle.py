"""Writes buffer_covers.json: the tiles a geodesic buffer of a shape touches, per zoom.

The oracle is independent of provision's GeodesicBuffer: each shape is projected to an azimuthal
equidistant projection centred on it (pyproj, WGS84 ellipsoid), buffered in metres there with
shapely at high resolution, projected back with densified edges, and intersected with every
candidate tile's lng/lat rectangle (mercantile). Run: python3 make_buffer_oracle.py
"""
import json

import mercantile
from pyproj import Transformer
from shapely.geometry import LineString, Point, Polygon, box, mapping, shape
from shapely.ops import transform

CASES = [
    {"name": "500 m corridor along a Paris route", "metres": 500, "zooms": [12, 13, 14, 15, 16],
     "geometry": {"type": "LineString", "coordinates": [[2.2945, 48.8584], [2.3200, 48.8650], [2.3499, 48.8530], [2.3700, 48.8600]]}},
    {"name": "2 km around a point in Oslo", "metres": 2000, "zooms": [10, 11, 12, 13, 14],
     "geometry": {"type": "Point", "coordinates": [10.7522, 59.9139]}},
    {"name": "1 km around a square near the equator", "metres": 1000, "zooms": [10, 11, 12, 13],
     "geometry": {"type": "Polygon", "coordinates": [[[36.80, -1.30], [36.85, -1.30], [36.85, -1.25], [36.80, -1.25], [36.80, -1.30]]]}},
]


def buffered(geometry, metres):
    geom = shape(geometry)
    c = geom.centroid
    aeqd = f"+proj=aeqd +lat_0={c.y} +lon_0={c.x} +datum=WGS84 +units=m"
    forward = Transformer.from_crs("EPSG:4326", aeqd, always_xy=True).transform
    back = Transformer.from_crs(aeqd, "EPSG:4326", always_xy=True).transform
    grown = transform(forward, geom).buffer(metres, quad_segs=256)
    return transform(back, grown.segmentize(metres / 50))


def main():
    out = {"oracle": "pyproj aeqd + shapely buffer (WGS84), mercantile tiles, shapely intersects", "cases": []}
    for case in CASES:
        area = buffered(case["geometry"], case["metres"])
        w, s, e, n = area.bounds
        zooms = {}
        for z in case["zooms"]:
            tiles = []
            for t in mercantile.tiles(w, s, e, n, [z]):
                b = mercantile.bounds(t)
                if area.intersects(box(b.west, b.south, b.east, b.north)):
                    tiles.append([t.x, t.y])
            zooms[str(z)] = sorted(tiles)
        out["cases"].append({"name": case["name"], "metres": case["metres"], "geometry": case["geometry"], "zooms": zooms})
    with open("buffer_covers.json", "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
