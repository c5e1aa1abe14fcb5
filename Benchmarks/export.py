"""Part four of Benchmarks/run: `provision export` of a 1,000,490-tile store (`--quick`: 200,080).

The store is applied from the scale part's cached MBTiles origin (distinct tiles of a realistic size
mix; not measured here). Then, each under GNU time (wall, CPU, peak RSS), writing into the run's
fresh file system:

- `provision export --format pmtiles` against the `pmtiles` package's converter
  (`pmtiles-convert`, PyPI) turning the same tiles, provision's MBTiles export, into PMTiles;
- `provision export --format mbtiles` against the `sqlite3` shell copying the store's rows into an
  MBTiles `tiles` table with a unique index (no inflating, no gzip, no deduplication: the physical
  limit of the copy), with the same pragmas provision's writer uses (no journal, no sync).

Every output's tile count is checked against the store's (the PMTiles headers read with the
`pmtiles` package). Target: provision's peak RSS at most 150 MB for each export.

Then the same exports (and pmtiles-convert) of a second store, at the quick size: the fixture with
60% of its tiles replaced by one of three small tiles, as open ocean and unbroken land repeat in a
real tileset.
"""
import json
import os
import shutil
import subprocess

from bench import log, run_measured, tail
from scale import EPOCH, SIDES, build_mbtiles, build_ocean_mbtiles, count_rows, write_job


def rows(path):
    """The rows of an MBTiles `tiles` table or view; 0 when it cannot be read."""
    try:
        return count_rows(path)
    except Exception as error:  # a failed peer is reported, not fatal
        log(f"export: cannot count the tiles of {path}: {error}")
        return 0


class Export:
    def __init__(self, args):
        self.args = args
        self.work = os.path.join(args.work, "export")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.fs = args.fs
        self.prov = args.provision
        self.env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
        self.result = {"part": "export", "filesystem": args.fs_kind, "quick": bool(args.quick)}

    def measure(self, name, cmd, tiles, output, timeout=1800):
        m = run_measured(cmd, env=self.env, timeout=timeout, stdout_path=os.path.join(self.logs, name + ".out"),
                         stderr_path=os.path.join(self.logs, name + ".err"))
        e = {"tiles": tiles, "seconds": m["wall"], "tilesPerSecond": tiles / m["wall"] if tiles and m["wall"] > 0 else 0,
             "cpuSeconds": m["cpu"], "peakRSSMB": m["rssMB"], "rc": m["rc"], "timedOut": m["timedOut"],
             "bytes": os.path.getsize(output) if os.path.exists(output) else 0}
        if m["rc"] != 0:
            e["error"] = tail(os.path.join(self.logs, name + ".err"), 3)[-400:]
        log(f"export {name}: rc {m['rc']}, {m['wall']:.1f} s, cpu {m['cpu']:.1f} s, rss {m['rssMB']:.0f} MB, "
            f"{e['bytes'] / 1e6:,.0f} MB" + (f": {e.get('error')}" if m["rc"] else ""))
        return e

    def pmtiles_tiles(self, path):
        """The addressed tile count of a PMTiles header, read by the pmtiles package."""
        script = ("import json, sys\nfrom pmtiles.reader import MmapSource, Reader\n"
                  "with open(sys.argv[1], 'rb') as f:\n"
                  "    h = Reader(MmapSource(f)).header()\n"
                  "print(json.dumps({'tiles': h['addressed_tiles_count'], 'contents': h['tile_contents_count']}))\n")
        out = subprocess.run([self.args.python, "-c", script, path], capture_output=True, text=True)
        return json.loads(out.stdout) if out.returncode == 0 else {"tiles": 0, "contents": 0, "error": out.stderr[-300:]}

    def provision_export(self, name, store, fmt, path, tiles):
        """`provision export --format fmt` of `store` to `path`, measured, with the tiles read back."""
        e = self.measure(name, [self.prov, "export", "--store", store, "--format", fmt, "--out", path, "--quiet"],
                         tiles, path)
        if fmt == "pmtiles":
            e["header"] = self.pmtiles_tiles(path) if e["rc"] == 0 else {}
        else:
            e["rows"] = rows(path) if e["rc"] == 0 else 0
        return e

    def apply(self, mbtiles, side, name, log_name):
        """Applies the MBTiles origin `mbtiles` into a fresh store `name` on the run's file system
        (not measured); returns the store and its tile count. Raises when the apply fails."""
        store = os.path.join(self.fs, name)
        shutil.rmtree(store, ignore_errors=True)
        job = write_job(os.path.join(self.work, name + ".json"), side, mbtiles)
        with open(os.path.join(self.logs, log_name + ".err"), "wb") as err:
            applied = subprocess.run([self.prov, "apply", job, "--store", store, "--quiet"], env=self.env, stderr=err)
        if applied.returncode != 0:
            raise RuntimeError(f"export: the apply failed ({applied.returncode}); see {self.logs}/{log_name}.err")
        return store, count_rows(os.path.join(store, "offline.db"))

    def run(self):
        side = SIDES["quick" if self.args.quick else "full"]
        mbtiles = os.path.join(self.args.cache, f"scale-{side}.mbtiles")
        fx = build_mbtiles(mbtiles, side)
        log(f"export: applying {fx['count']:,} tiles (not measured)")
        try:
            store, tiles = self.apply(mbtiles, side, "export-store", "apply")
        except RuntimeError as error:
            raise SystemExit(str(error))
        db = os.path.join(store, "offline.db")
        self.result["store"] = {"tiles": tiles, "bytes": os.path.getsize(db), "fixture": fx["count"]}
        out = os.path.join(self.fs, "export-out")
        os.makedirs(out, exist_ok=True)

        # PMTiles: provision, then the pmtiles package's converter from provision's MBTiles.
        mine = os.path.join(out, "provision.pmtiles")
        self.result["provisionPMTiles"] = self.provision_export("provision-pmtiles", store, "pmtiles", mine, tiles)
        source = os.path.join(out, "provision.mbtiles")
        self.result["provisionMBTiles"] = self.provision_export("provision-mbtiles", store, "mbtiles", source, tiles)
        os.remove(mine) if os.path.exists(mine) else None

        peer = os.path.join(out, "peer.pmtiles")
        if self.args.pmtiles_convert and os.path.exists(source):
            e = self.measure("pmtiles-convert", [self.args.pmtiles_convert, source, peer], tiles, peer, timeout=3600)
            e["header"] = self.pmtiles_tiles(peer) if e["rc"] == 0 else {}
            self.result["pmtilesConvert"] = e
        os.remove(peer) if os.path.exists(peer) else None
        os.remove(source) if os.path.exists(source) else None

        # MBTiles: the sqlite3 shell copying the rows as they are.
        raw = os.path.join(out, "raw.mbtiles")
        script = os.path.join(self.work, "copy.sql")
        with open(script, "w") as f:
            f.write(f"""PRAGMA page_size = 4096;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE metadata (name TEXT, value TEXT);
CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
ATTACH DATABASE '{db}' AS store;
BEGIN;
INSERT INTO tiles SELECT z, x, (1 << z) - 1 - y, data FROM store.tiles
  WHERE length(data) > 0 ORDER BY url_template, pixel_ratio, z, x, y;
CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
COMMIT;
""")
        e = self.measure("sqlite3-copy", ["sqlite3", "-bail", raw, ".read " + script], tiles, raw)
        e["rows"] = rows(raw) if e["rc"] == 0 else 0
        self.result["sqlite3"] = e
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
        try:
            self.result["ocean"] = self.ocean()
        except Exception as error:  # a failed case is reported, not fatal
            self.result["ocean"] = {"error": str(error)[-400:]}
        return self.result

    def ocean(self):
        """The same exports of a store where 60% of the tiles are one of three small tiles (open
        ocean and unbroken land in a real tileset), at the quick size: provision's PMTiles export
        against pmtiles-convert, and its MBTiles export."""
        side = SIDES["quick"]
        source = os.path.join(self.args.cache, f"scale-{side}.mbtiles")
        build_mbtiles(source, side)
        mbtiles = os.path.join(self.args.cache, f"scale-{side}-ocean.mbtiles")
        fx = build_ocean_mbtiles(source, mbtiles)
        store, tiles = self.apply(mbtiles, side, "export-ocean-store", "ocean-apply")
        db = os.path.join(store, "offline.db")
        result = {"store": {"tiles": tiles, "bytes": os.path.getsize(db), "repeated": fx.get("repeated", 0)}}
        out = os.path.join(self.fs, "export-ocean-out")
        os.makedirs(out, exist_ok=True)
        mine = os.path.join(out, "provision.pmtiles")
        result["provisionPMTiles"] = self.provision_export("ocean-provision-pmtiles", store, "pmtiles", mine, tiles)
        source_out = os.path.join(out, "provision.mbtiles")
        result["provisionMBTiles"] = self.provision_export("ocean-provision-mbtiles", store, "mbtiles", source_out,
                                                           tiles)
        if self.args.pmtiles_convert and os.path.exists(source_out):
            peer = os.path.join(out, "peer.pmtiles")
            e = self.measure("ocean-pmtiles-convert", [self.args.pmtiles_convert, source_out, peer], tiles, peer,
                             timeout=3600)
            e["header"] = self.pmtiles_tiles(peer) if e["rc"] == 0 else {}
            result["pmtilesConvert"] = e
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
        return result


def run_export(args):
    return Export(args).run()
