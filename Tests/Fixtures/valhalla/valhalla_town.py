#!/usr/bin/env python3
"""A routing town of our own, built into Valhalla graph tiles by Valhalla itself (PyPI pyvalhalla).

Commands (run with the python of the `.valhalla` venv that .ci/setup installs):

  build DIR [--changeset N]
                       write DIR/town.osm (OSM XML), convert it with osmium to DIR/town.osm.pbf,
                       write DIR/valhalla.json with valhalla_build_config and build DIR/tiles with
                       the wheel's valhalla_build_tiles; prints {"tileDir", "config", "pbf", "seconds"}.
  extract DIR OUT.tar [--bbox W,S,E,N]
                       run the wheel's valhalla_build_extract on DIR's tile tree (optionally cut by bbox).
  route (--tile-dir D | --tile-extract T) [--action locate]
                       read a JSON list of route (or locate) requests on stdin, answer each with valhalla.Actor
                       configured on the tile tree or on the extract alone (no tile_dir); prints a JSON
                       list of answers (the Actor's JSON, a locate list as {"locations": list}, or {"error": text}
                       for a request it refuses).

The town spans lon 5.02..5.73, lat 50.02..50.48: 3 x 2 level-2 tiles (0.25 deg), one level-1 tile
and one level-0 tile. It has a motorway (level 0), a primary road (level 0), two secondary roads
(level 1), a residential grid in each level-2 tile, one-way streets and a no-left-turn restriction.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import valhalla

BIN = Path(valhalla.__file__).parent / "bin"
SCRIPTS = Path(sys.executable).parent
CHANGESET = 4242  # every element's changeset: the build's dataset id (build --changeset changes it)


class Town:
    def __init__(self):
        self.nodes = {}  # (lon, lat) rounded -> id
        self.ways = []  # (id, [node ids], tags)
        self.relations = []

    def node(self, lon, lat):
        key = (round(lon, 7), round(lat, 7))
        if key not in self.nodes:
            self.nodes[key] = len(self.nodes) + 1
        return self.nodes[key]

    def way(self, points, **tags):
        ids = [self.node(lon, lat) for lon, lat in points]
        way_id = 1000 + len(self.ways)
        self.ways.append((way_id, ids, tags))
        return way_id

    def xml(self, changeset):
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="valhalla_town.py">']
        attrs = f'version="1" changeset="{changeset}" timestamp="2024-01-01T00:00:00Z"'
        for (lon, lat), node_id in sorted(self.nodes.items(), key=lambda item: item[1]):
            lines.append(f'  <node id="{node_id}" {attrs} lat="{lat:.7f}" lon="{lon:.7f}"/>')
        for way_id, ids, tags in self.ways:
            lines.append(f'  <way id="{way_id}" {attrs}>')
            lines += [f'    <nd ref="{n}"/>' for n in ids]
            lines += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
            lines.append("  </way>")
        for rel_id, members, tags in self.relations:
            lines.append(f'  <relation id="{rel_id}" {attrs}>')
            lines += [f'    <member type="{t}" ref="{r}" role="{role}"/>' for t, r, role in members]
            lines += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
            lines.append("  </relation>")
        lines.append("</osm>")
        return "\n".join(lines) + "\n"


def steps(a, b, count):
    """count+1 points from a to b, so long roads get intermediate nodes (shared at crossings)."""
    return [(a[0] + (b[0] - a[0]) * i / count, a[1] + (b[1] - a[1]) * i / count) for i in range(count + 1)]


def town():
    t = Town()
    west, east, south, north = 5.02, 5.73, 50.02, 50.48
    # Residential grid columns and rows: every 0.01 deg inside each level-2 cell.
    grid_lons = [round(5.02 + 0.01 * i, 2) for i in range(72)]  # 5.02 .. 5.73
    grid_lats = [round(50.02 + 0.01 * i, 2) for i in range(47)]  # 50.02 .. 50.48
    motorway_lat, primary_lon = 50.26, 5.37
    secondary_lats = [50.10, 50.40]
    # The motorway east-west through the town, crossing every level-2 column.
    t.way([(lon, motorway_lat) for lon in grid_lons], highway="motorway", name="A 1", ref="A1",
          oneway="no", maxspeed="120")
    # The primary road north-south and the two secondary roads east-west. The primary road and
    # Chaussee 1 are split where they cross, so the turn restriction below names whole ways.
    via_lat = secondary_lats[0]
    primary = dict(highway="primary", name="Route Nationale", ref="N4", maxspeed="90")
    primary_south = t.way([(primary_lon, lat) for lat in grid_lats if lat <= via_lat], **primary)
    t.way([(primary_lon, lat) for lat in grid_lats if lat >= via_lat], **primary)
    chaussee = dict(highway="secondary", name="Chaussee 1", maxspeed="70")
    chaussee_west = t.way([(lon, via_lat) for lon in grid_lons if lon <= primary_lon], **chaussee)
    t.way([(lon, via_lat) for lon in grid_lons if lon >= primary_lon], **chaussee)
    t.way([(lon, secondary_lats[1]) for lon in grid_lons], highway="secondary", name="Chaussee 2", maxspeed="70")
    # No left turn from the primary road, north-bound, onto Chaussee 1 west-bound.
    t.relations.append((5000, [("way", primary_south, "from"), ("node", t.node(primary_lon, via_lat), "via"),
                               ("way", chaussee_west, "to")],
                        {"type": "restriction", "restriction": "no_left_turn"}))
    # Residential streets: north-south every 0.04 deg, east-west every 0.04 deg, between the big roads;
    # every third one is one-way (north-bound or east-bound).
    ns_lons = [lon for lon in grid_lons[2::4] if abs(lon - primary_lon) > 0.005]
    ew_lats = [lat for lat in grid_lats[2::4] if abs(lat - motorway_lat) > 0.005 and lat not in secondary_lats]
    for n, lon in enumerate(ns_lons):
        tags = {"highway": "residential", "name": f"Rue {n + 1}"}
        if n % 3 == 1:
            tags["oneway"] = "yes"
        # Split at the motorway: residential streets do not cross it at grade (they pass under).
        t.way([(lon, lat) for lat in grid_lats if lat < motorway_lat], **tags)
        t.way([(lon, lat) for lat in grid_lats if lat > motorway_lat], **tags)
    for n, lat in enumerate(ew_lats):
        tags = {"highway": "residential", "name": f"Avenue {n + 1}"}
        if n % 3 == 1:
            tags["oneway"] = "yes"
        t.way([(lon, lat) for lon in grid_lons], **tags)
    return t


def build(directory, changeset):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    osm = directory / "town.osm"
    osm.write_text(town().xml(changeset))
    pbf = directory / "town.osm.pbf"
    subprocess.run(["osmium", "cat", "--overwrite", "-o", str(pbf), str(osm)], check=True)
    tiles = directory / "tiles"
    config = directory / "valhalla.json"
    made = subprocess.run([str(SCRIPTS / "valhalla_build_config"), "--mjolnir-tile-dir", str(tiles),
                           "--mjolnir-tile-extract", str(directory / "whole.tar"),
                           "--mjolnir-timezone", "", "--mjolnir-admin", ""],
                          check=True, capture_output=True, text=True)
    config.write_text(made.stdout)
    log = directory / "build_tiles.log"
    with open(log, "w") as out:
        subprocess.run([str(BIN / "valhalla_build_tiles"), "-c", str(config), str(pbf)],
                       check=True, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - started
    summary = {"tileDir": str(tiles), "config": str(config), "pbf": str(pbf), "seconds": seconds}
    (directory / "build.json").write_text(json.dumps(summary))
    print(json.dumps(summary))


def extract(directory, out, bbox):
    # The tree may have been built under another name and renamed into place: point at it here.
    config = Path(directory) / "valhalla.json"
    mjolnir = {**json.loads(config.read_text())["mjolnir"], "tile_dir": str(Path(directory) / "tiles"),
               "tile_extract": out}
    command = [str(SCRIPTS / "valhalla_build_extract"), "-c", str(config), "-i", json.dumps({"mjolnir": mjolnir}),
               "-O"]
    if bbox:
        command += ["-b", bbox]
    subprocess.run(command, check=True)


def route(tile_dir, tile_extract, action):
    config = valhalla.get_config(tile_extract="", tile_dir="")
    config["mjolnir"]["tile_dir"] = tile_dir or ""
    config["mjolnir"]["tile_extract"] = tile_extract or ""
    if tile_extract:
        del config["mjolnir"]["tile_dir"]
    actor = valhalla.Actor(config)
    answers = []
    for request in json.load(sys.stdin):
        try:
            answer = getattr(actor, action)(request)
            # locate answers a list (one object per location): wrapped so every answer is an object.
            answers.append({"locations": answer} if isinstance(answer, list) else answer)
        except Exception as error:  # Valhalla refuses: no route, no path, a location off the graph
            answers.append({"error": str(error)})
    print(json.dumps(answers))


def main(arguments):
    command = arguments[0]
    if command == "build":
        build(arguments[1], int(arguments[arguments.index("--changeset") + 1]) if "--changeset" in arguments else CHANGESET)
    elif command == "extract":
        bbox = arguments[arguments.index("--bbox") + 1] if "--bbox" in arguments else ""
        extract(arguments[1], arguments[2], bbox)
    elif command == "route":
        tile_dir = arguments[arguments.index("--tile-dir") + 1] if "--tile-dir" in arguments else None
        tile_extract = arguments[arguments.index("--tile-extract") + 1] if "--tile-extract" in arguments else None
        action = arguments[arguments.index("--action") + 1] if "--action" in arguments else "route"
        route(tile_dir, tile_extract, action)
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
