"""Merges the parts Benchmarks/run measured into one JSON document and prints the tables."""
import json
import platform
import os
import time

from bench import CASES, TOOL_LABELS

PEER_ORDER = ["wrk", "curl", "aria2c", "download-tiles", "provision"]


def fmt_rate(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def peers_table(peers):
    tools = peers["tools"]
    prov = tools.get("provision", {})
    fx = peers["fixture"]
    lines = [
        f"{fx['count']:,} tiles ({fx['bytes'] / 1e6:.0f} MB, median {fx['medianBytes'] / 1000:.1f} KB) from nginx on "
        f"127.0.0.1, every tool writing to {peers.get('filesystem', 'one file system')}; tiles/s median of "
        f"{peers['reps']}; ×: provision's tiles/s ÷ that tool's",
        "",
        "| tool | " + " | ".join(label for _, label, _, _ in CASES) + " | CPU s per 10k tiles | peak RSS MB |",
        "|---|" + "---|" * (len(CASES) + 2),
    ]
    for tool in PEER_ORDER:
        if tool not in tools:
            continue
        cells, cpus, rss = [], [], []
        for case, _, _, _ in CASES:
            entry = tools[tool].get(case)
            if not entry:
                cells.append("—")
                continue
            if "tilesPerSecond" not in entry:
                cells.append("failed")
                continue
            cell = fmt_rate(entry["tilesPerSecond"])
            p = prov.get(case, {}).get("tilesPerSecond")
            if tool != "provision" and p:
                cell += f" (×{p / entry['tilesPerSecond']:.2f})"
            if tool in ("aria2c", "download-tiles") and entry.get("tiles") != fx["count"]:
                cell += f" [{entry['tiles']:,} tiles]"
            cells.append(cell)
            cpus.append(entry["cpuPer10k"])
            rss.append(entry["peakRSSMB"])
        cpu = f"{min(cpus):.1f}–{max(cpus):.1f}" if cpus else "—"
        lines.append(f"| {TOOL_LABELS[tool]} | " + " | ".join(cells) + f" | {cpu} | {max(rss) if rss else 0:.0f} |")
        if tool == "provision" and any("tilesPhaseTilesPerSecond" in e for e in tools[tool].values()):
            phase = []
            for case, _, _, _ in CASES:
                e = tools[tool].get(case, {})
                if "tilesPhaseTilesPerSecond" in e:
                    phase.append(f"{fmt_rate(e['tilesPhaseTilesPerSecond'])} (+{e['finishSeconds']:.1f} s to finish)")
                else:
                    phase.append("—")
            lines.append("| ↳ provision, download-and-write phase only | " + " | ".join(phase) + " | | |")
    notes = sorted({e["note"] for t in tools.values() for e in t.values() if e.get("note")})
    notes += peers.get("notes", [])
    if notes:
        lines.append("")
        lines += [f"- {n}" for n in notes]
    return lines


def plans_table(plans):
    lines = ["| plan | result | seconds | peak RSS MB |", "|---|---|---|---|"]
    f = plans.get("france")
    if f:
        lines.append(f"| France outline (50 vertices) z0–14, empty store | {f.get('tiles') or 0:,} tiles to add "
                     f"| {f['seconds']:.3f} | {f['peakRSSMB']:.0f} |")
    a = plans.get("millionApply")
    if a:
        d = a.get("durations") or {}
        lines.append(f"| apply of the 1M-tile region from an MBTiles origin | {a['linkedTiles']:,} tiles, "
                     f"{a['storeBytes'] / 1e6:.0f} MB offline.db (report: applySeconds {d.get('applySeconds', '?')}) "
                     f"| {a['seconds']:.1f} | {a['peakRSSMB']:.0f} |")
    m = plans.get("millionPlan")
    if m and "seconds" in m:
        t = m.get("tiles") or {}
        lines.append(f"| plan of that region against the store holding it | keep {t.get('keep', 0):,}, add "
                     f"{t.get('add', 0):,}, changes: {m.get('hasChanges')} | {m['seconds']:.3f} | {m['peakRSSMB']:.0f} |")
    elif m:
        lines.append(f"| plan of the 1M-tile region | {m.get('error')} | — | — |")
    p = plans.get("planetRefusal")
    if p:
        lines.append(f"| planet z0–22 ({p['expectedTiles']:,} tiles), default limit | exit {p['rc']} (refused: counted "
                     f"past the limit) | {p['seconds']:.4f} (process start-up {plans['startupSeconds']:.4f}) "
                     f"| {p['peakRSSMB']:.0f} |")
    u = plans.get("planetUnlimited")
    if u:
        result = f"not finished after {u['timeoutSeconds']} s (enumerates every tile)" if u["timedOut"] \
            else f"exit {u['rc']}, {u.get('tiles')} tiles"
        lines.append(f"| planet z0–22, limits.maxTiles raised | {result} | {u['seconds']:.1f} | {u['peakRSSMB']:.0f} |")
    return lines


def scale_table(scale):
    """The scale part: the big apply against sqlite3, shards and merge, the 10M plan, HTTPS/HTTP/2."""
    fx = scale.get("fixture", {})
    classes = fx.get("classes", {})
    n = fx.get("count") or 1
    mix = ", ".join(f"{c['tiles'] / n * 100:.1f}% {name}" for name, c in classes.items())
    where = (f"{fx.get('count', 0):,} distinct tiles ({fx.get('bytes', 0) / 1e9:.2f} GB of gzip MVT, "
             f"{fx.get('minBytes', 0):,}–{fx.get('maxBytes', 0):,} B: {mix}) from an MBTiles origin"
             if fx else "The HTTPS cases only (--https-only: HTTP/2, and HTTP/1.1)")
    lines = [
        f"{where} into {scale.get('filesystem', 'one file system')}; "
        f"×: provision's tiles/s ÷ the peer's (its time ratio is the inverse)",
        "",
        "| case | tiles | seconds | tiles/s | peak RSS MB | × |",
        "|---|---|---|---|---|---|",
    ]

    def row(label, e, ratio="", tiles=None, seconds=None):
        if not e:
            return
        if "error" in e and "seconds" not in e:  # the case itself failed (Scale.guarded)
            lines.append(f"| {label} | failed: {str(e['error'])[:120]} | | | | |")
            return
        if e.get("rc", 0) != 0 or e.get("timedOut"):
            lines.append(f"| {label} | failed (exit {e.get('rc')}{', timed out' if e.get('timedOut') else ''}) | | | | |")
            return
        t = e.get("tiles", 0) if tiles is None else tiles
        sec = e["seconds"] if seconds is None else seconds
        rate = f"{t / sec:,.0f}" if t and sec else "—"
        lines.append(f"| {label} | {t:,} | {sec:.2f} | {rate} | {e.get('peakRSSMB', 0):.0f} | {ratio} |")

    raw, single = scale.get("sqlite3"), scale.get("apply")

    def vs(e, peer, name):
        if e and peer and e.get("rc", 0) == 0 and peer.get("rc", 0) == 0 and e.get("seconds") and peer.get("seconds"):
            return f"×{peer['seconds'] / e['seconds']:.2f} {name}"
        return ""

    def runs(e):
        r = (e or {}).get("runs") or []
        return f", median of {len(r)} taking turns ({', '.join(f'{x:.1f}' for x in r)} s)" if len(r) > 1 else ""

    row("sqlite3 shell: the same rows into the same schema, one transaction (the limit" + runs(raw) + ")", raw)
    row("**provision apply** (one process" + runs(single) + ")", single, vs(single, raw, "sqlite3"))
    sh = scale.get("shards")
    if sh:
        k = sh["count"]
        row(f"provision apply --shard I/{k}, one after another (sum)", sh if sh["ok"] else {"rc": 1},
            vs({"rc": 0, "seconds": sh["sumSeconds"]}, single, "one apply"), seconds=sh["sumSeconds"])
        row(f"↳ on {k} machines at once (the slowest shard)", sh if sh["ok"] else {"rc": 1},
            vs({"rc": 0, "seconds": sh["maxSeconds"]}, single, "one apply"), seconds=sh["maxSeconds"])
    mg = scale.get("merge")
    if mg and not mg.get("available", True):
        lines.append(f"| {mg.get('note', 'merge: not available in this build')} | | | | | |")
    elif mg and "error" in mg and "seconds" not in mg:
        lines.append(f"| provision merge of the shards | {mg['error']} | | | | |")
    elif mg:
        row(f"provision merge of the {sh['count'] if sh else 4} shard stores", mg)
        if sh and sh["ok"] and mg.get("rc") == 0:
            total = sh["maxSeconds"] + mg["seconds"]
            row(f"↳ {sh['count']} machines, then the merge", {"tiles": mg["tiles"], "seconds": total,
                                                              "peakRSSMB": max(sh["peakRSSMB"], mg["peakRSSMB"])},
                vs({"rc": 0, "seconds": total}, single, "one apply"))
    plans = scale.get("plan10M", {})
    if plans.get("error"):
        lines.append(f"| provision plan of the 10M-tile region: failed: {str(plans['error'])[:120]} | | | | | |")
    for key, label in (("empty", "provision plan of a {n:,}-tile region, empty store"),
                       ("store", "provision plan of it against the store of the apply above")):
        e = plans.get(key)
        if e:
            s = e.get("summary") or {}
            add = (s.get("tiles") or {}).get("add") if isinstance(s.get("tiles"), dict) else None
            label = label.format(n=e.get("tiles", 0)) + (f" (to add {add:,})" if isinstance(add, int) else "")
            row(label, e)
    for key, title in (("h2", "HTTPS + HTTP/2"), ("h1s", "HTTPS + HTTP/1.1")):
        lines += tls_rows(scale.get(key, {}), title, http2=key == "h2")
    if mg and mg.get("available", True) and "byteIdentical" in mg:
        lines += ["", f"byte-identical (merge of the shards vs the single apply, offline.db and provision.lock.json): "
                      f"{'yes' if mg['byteIdentical'] else 'no'} (offline.db {'yes' if mg['offlineDbIdentical'] else 'no'}, "
                      f"lock {'yes' if mg['lockIdentical'] else 'no'})"]
    elif mg and not mg.get("available", True):
        lines += ["", "byte-identical: not checked (merge: not available in this build)"]
    return lines


def tls_rows(case, title, http2):
    """The rows of one HTTPS case of the scale part: h2load, curl and provision from one nginx."""
    lines = []
    if case.get("tools"):
        tools, n = case["tools"], case["connections"]
        p = tools.get("provision", {}).get("tilesPerSecond")
        labels = {"h2load": (f"h2load -c1 -m{n}" if http2 else f"h2load --h1 -c{n}") + " (ceiling, writes nothing)",
                  "curl": (f"curl --parallel --parallel-max {n} --http2 (multiplexed, plain files)" if http2
                           else f"curl --parallel --parallel-max {n} --http1.1 (plain files)"),
                  "provision": f"**provision apply** (concurrency {n})"}
        lines.append(f"| *{title} from nginx on 127.0.0.1: {case['tiles']:,} tiles ({case['bytes'] / 1e6:.0f} MB), "
                     f"median of {case['reps']}* | | | | | |")
        for tool in ("h2load", "curl", "provision"):
            e = tools.get(tool)
            if not e:
                continue
            if "tilesPerSecond" not in e:
                lines.append(f"| {labels[tool]} | failed: {e.get('error', '')[:120]} | | | | |")
                continue
            ratio = f"×{p / e['tilesPerSecond']:.2f}" if p and tool != "provision" else ""
            lines.append(f"| {labels[tool]} | {e['tiles']:,} | {e['seconds']:.2f} | {e['tilesPerSecond']:,.0f} | "
                         f"{e['peakRSSMB']:.0f} | {ratio} |")
    elif case.get("note"):
        lines.append(f"| {title}: {case['note']} | | | | | |")
    elif case.get("error"):
        lines.append(f"| {title}: failed: {str(case['error'])[:120]} | | | | | |")
    return lines


def export_table(export):
    """The export part: provision's PMTiles and MBTiles exports against the pmtiles converter and sqlite3."""
    st = export.get("store", {})
    lines = [
        f"A store of {st.get('tiles', 0):,} distinct tiles ({st.get('bytes', 0) / 1e9:.2f} GB offline.db) exported "
        f"into {export.get('filesystem', 'one file system')}; ×: provision's tiles/s ÷ the peer's",
        "",
        "| case | tiles | seconds | CPU s | tiles/s | peak RSS MB | output MB | × |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def row(label, e, peer=None, name="", tiles=None):
        if not e:
            return
        if e.get("rc", 0) != 0 or e.get("timedOut"):
            lines.append(f"| {label} | failed (exit {e.get('rc')}{', timed out' if e.get('timedOut') else ''}) | | | | | | |")
            return
        ratio = ""
        if peer and peer.get("rc", 0) == 0 and peer.get("seconds"):
            ratio = f"×{peer['seconds'] / e['seconds']:.2f} {name}"
        t = e.get("tiles", 0) if tiles is None else tiles
        lines.append(f"| {label} | {t:,} | {e['seconds']:.1f} | {e.get('cpuSeconds', 0):.1f} | {t / e['seconds']:,.0f} "
                     f"| {e.get('peakRSSMB', 0):.0f} "
                     f"| {e.get('bytes', 0) / 1e6:,.0f} | {ratio} |")

    pm, conv = export.get("provisionPMTiles"), export.get("pmtilesConvert")
    mb, raw = export.get("provisionMBTiles"), export.get("sqlite3")
    row("pmtiles-convert (PyPI `pmtiles`) from provision's MBTiles", conv,
        tiles=(conv or {}).get("header", {}).get("tiles"))
    row("**provision export --format pmtiles**", pm, conv, "pmtiles-convert", tiles=(pm or {}).get("header", {}).get("tiles"))
    row("sqlite3 shell: the rows as stored into an MBTiles `tiles` table (the limit)", raw, tiles=(raw or {}).get("rows"))
    row("**provision export --format mbtiles**", mb, raw, "sqlite3", tiles=(mb or {}).get("rows"))
    ocean = export.get("ocean") or {}
    if ocean.get("error"):
        lines.append(f"| the store of repeated small tiles: failed: {str(ocean['error'])[:120]} | | | | | | | |")
    elif ocean:
        os_ = ocean.get("store", {})
        lines.append(f"| *a store of {os_.get('tiles', 0):,} tiles, {os_.get('repeated', 0):,} of them one of three small "
                     f"tiles (open ocean, unbroken land; {os_.get('bytes', 0) / 1e6:,.0f} MB offline.db)* | | | | | | | |")
        oconv, opm = ocean.get("pmtilesConvert"), ocean.get("provisionPMTiles")
        row("pmtiles-convert from provision's MBTiles", oconv, tiles=(oconv or {}).get("header", {}).get("tiles"))
        row("**provision export --format pmtiles**", opm, oconv, "pmtiles-convert",
            tiles=(opm or {}).get("header", {}).get("tiles"))
        row("**provision export --format mbtiles**", ocean.get("provisionMBTiles"), tiles=(ocean.get("provisionMBTiles") or {}).get("rows"))
    return lines


def search_table(search):
    """The search part: a search pack built from 100k and 200k tiles, alone and per region, and sqlite3."""
    sizes = search.get("sizes", {})
    first = next(iter(sizes.values()), {}).get("fixture", {})
    made = []
    for size, v in sizes.items():
        fx = v.get("fixture", {})
        made.append(f"{size}: {fx.get('count', 0):,} tiles, {fx.get('bytes', 0) / 1e6:,.0f} MB, "
                    f"{fx.get('namedFeatures', 0):,} named features")
    lines = [
        f"OpenMapTiles vector tiles z6–14 of three regions side by side (urban, suburban, rural; {'; '.join(made)}) "
        f"from an MBTiles origin into {search.get('filesystem', 'one file system')}; one search pack over the three. "
        f"Index build s: the `search-pack` event's; peak RSS: the whole process's (GNU time)",
        "",
        "| case | tiles read | process s | index build s | peak RSS MB | entries | pack bytes | per 100,000 tiles read |",
        "|---|---|---|---|---|---|---|---|",
    ] if first else ["search: no fixture was built", ""]

    def row(label, e):
        if not e:
            return
        if e.get("rc", 0) != 0 or e.get("timedOut") or ("error" in e and "seconds" not in e):
            lines.append(f"| {label} | failed: {str(e.get('error', ''))[:120]} | | | | | | |")
            return
        tiles = e.get("packTiles") or 0
        build = e.get("buildSeconds")
        per = ""
        if tiles and build is not None:
            k = 100_000 / tiles
            per = (f"{build * k:.1f} s, {(e.get('entries') or 0) * k:,.0f} entries, "
                   f"{(e.get('bytes') or 0) * k / 1e6:.1f} MB")
        runs = e.get("runs") or []
        label += f" (median of {len(runs)}: {', '.join(f'{r:.1f}' for r in runs)} s)" if len(runs) > 1 else ""
        lines.append(f"| {label} | {tiles:,} | {e['seconds']:.1f} | {f'{build:.1f}' if build is not None else '—'} "
                     f"| {e['peakRSSMB']:.0f} | {e.get('entries') or 0:,} | {(e.get('bytes') or 0) / 1e6:.1f} MB | {per} |")

    for size, v in sizes.items():
        if "error" in v and "apply" not in v:
            lines.append(f"| {size}: failed: {str(v['error'])[:120]} | | | | | | | |")
            continue
        row(f"**{size}**: provision apply into a new store (tiles, then the pack)", v.get("apply"))
        row("↳ the index build alone (search/places.db deleted, the job applied again)", v.get("rebuild"))
        counts = v.get("regionEntries") or {}
        for region, e in (v.get("regions") or {}).items():
            row(f"↳ region {region} alone (the pack on it only; {counts.get(region, 0):,} of the whole pack's "
                f"entries lie in it)", e)
        peer = v.get("sqlite3")
        if peer and peer.get("rc", 1) == 0 and "error" not in peer:
            mine = (v.get("rebuild") or {}).get("buildSeconds")
            ratio = f"; provision's index build ×{mine / peer['seconds']:.2f} its time" if mine else ""
            lines.append(f"| sqlite3 shell: the same entries from CSV into the same schema, FTS4 and R*Tree filled, "
                         f"optimized, vacuumed (the limit{ratio}) | — | {peer['seconds']:.1f} | — | "
                         f"{peer['peakRSSMB']:.0f} | {peer['entries']:,} | {peer['fileBytes'] / 1e6:.1f} MB | |")
        elif peer:
            lines.append(f"| sqlite3 shell peer: failed: {str(peer.get('error', ''))[:120]} | | | | | | | |")
    flat = search_flatness(search)
    if flat:
        lines += ["", f"Index build alone, 200k against 100k tiles: peak RSS ×{flat['rss']:.2f} "
                      f"({flat['rss100']:.0f} → {flat['rss200']:.0f} MB), entries ×{flat['entries']:.2f}, "
                      f"build seconds ×{flat['seconds']:.2f}; peak RSS per entry {flat['perEntry100']:.0f} → "
                      f"{flat['perEntry200']:.0f} bytes"]
    return lines


def search_flatness(search):
    """How the index build alone grows from the 100k to the 200k fixture, or None."""
    a = ((search or {}).get("sizes", {}).get("100k") or {}).get("rebuild") or {}
    b = ((search or {}).get("sizes", {}).get("200k") or {}).get("rebuild") or {}
    if not (a.get("rc") == 0 and b.get("rc") == 0 and a.get("peakRSSMB") and a.get("entries") and a.get("buildSeconds")):
        return None
    return {"rss100": a["peakRSSMB"], "rss200": b["peakRSSMB"], "rss": b["peakRSSMB"] / a["peakRSSMB"],
            "perEntry100": a["peakRSSMB"] * 1048576 / a["entries"],
            "perEntry200": b["peakRSSMB"] * 1048576 / max(b.get("entries") or 0, 1),
            "entries": (b.get("entries") or 0) / a["entries"], "seconds": (b.get("buildSeconds") or 0) / a["buildSeconds"]}


def targets(peers, plans, scale=None, export=None, search=None):
    """The targets of issue 5, each with what was measured."""
    rows = []

    def add(name, value, ok, shown):
        rows.append({"target": name, "value": value, "met": ok, "shown": shown})

    tools = (peers or {}).get("tools", {})
    prov = tools.get("provision", {})

    def rate(tool, case):
        return tools.get(tool, {}).get(case, {}).get("tilesPerSecond")

    p0 = rate("provision", "plain16")
    for peer, case, want, name in [("curl", "plain16", 0.8, "≥ 0.8× curl --parallel, no latency, 16 conns"),
                                   ("download-tiles", "plain16", 10.0, "≥ 10× download-tiles, no latency"),
                                   ("wrk", "delay16", 0.95, "≥ 95% of wrk, 20 ms, 16 conns"),
                                   ("wrk", "delay64", 0.90, "≥ 90% of wrk, 20 ms, 64 conns")]:
        p, q = rate("provision", case), rate(peer, case)
        if p and q:
            add(name, p / q, p / q >= want, f"{p / q:.2f}×")
    c = prov.get("plain16", {}).get("cpuPer10k")
    if c is not None:
        add("≤ 1.5 CPU s per 10k tiles, no latency", c, c <= 1.5, f"{c:.2f} s")
    r = prov.get("plain16", {}).get("peakRSSMB")
    if r is not None:
        add("peak RSS ≤ 80 MB, no latency", r, r <= 80, f"{r:.0f} MB")
    m = (plans or {}).get("millionPlan", {})
    if "seconds" in m:
        add("plan of 1M tiles against a store holding them < 3 s", m["seconds"], m["seconds"] < 3, f"{m['seconds']:.2f} s")
        add("… and < 300 MB peak RSS", m["peakRSSMB"], m["peakRSSMB"] < 300, f"{m['peakRSSMB']:.0f} MB")
    p = (plans or {}).get("planetRefusal")
    if p:
        net = p["seconds"] - plans["startupSeconds"]
        # Start-up varies by a few ms from run to run, so the difference can come out below 0.
        shown = f"{net * 1000:.1f} ms" if net > 0 else f"under the start-up's own noise ({net * 1000:.1f} ms)"
        add("planet z0–22 count < 10 ms (process start-up subtracted)", net, net < 0.010,
            f"{shown} (no count is printed: refused at the limit)")
    scale = scale or {}
    raw, single = scale.get("sqlite3", {}), scale.get("apply", {})
    if single.get("rc") == 0 and raw.get("rc") == 0 and raw.get("seconds"):
        r = single["seconds"] / raw["seconds"]
        add(f"{single['tiles']:,}-tile apply within 2× of the sqlite3 copy (issue 12)", r, r <= 2.0, f"{r:.2f}× its time")
    rss = [(name, e.get("peakRSSMB")) for name, e in
           [("apply", single), ("shards", scale.get("shards", {})), ("merge", scale.get("merge", {})),
            ("10M plan", scale.get("plan10M", {}).get("empty", {})),
            ("10M plan vs store", scale.get("plan10M", {}).get("store", {})),
            ("HTTPS/HTTP/2 apply", scale.get("h2", {}).get("tools", {}).get("provision", {}))] if e.get("peakRSSMB")]
    if rss:
        worst = max(rss, key=lambda x: x[1])
        add("provision peak RSS ≤ 150 MB at any tile count (issue 12)", worst[1], worst[1] <= 150,
            f"{worst[1]:.0f} MB ({worst[0]})")
    h2 = scale.get("h2", {}).get("tools", {})
    hp, hc = h2.get("provision", {}).get("seconds"), h2.get("curl", {}).get("seconds")
    if hp and hc:
        add("HTTPS/HTTP/2 apply ≥ 1.5× curl --parallel --http2 (issue 12)", hc / hp, hc / hp >= 1.5,
            f"{hc / hp:.2f}×")
    p10 = scale.get("plan10M", {}).get("empty", {})
    if p10.get("seconds") is not None and p10.get("rc") == 0:
        add(f"plan of {p10['tiles']:,} tiles < 10 s (issue 12)", p10["seconds"], p10["seconds"] < 10,
            f"{p10['seconds']:.2f} s")
    for key, name in [("provisionPMTiles", "PMTiles"), ("provisionMBTiles", "MBTiles")]:
        e = (export or {}).get(key, {})
        if e.get("rc") == 0 and e.get("peakRSSMB"):
            add(f"{name} export of {e['tiles']:,} tiles: peak RSS ≤ 150 MB", e["peakRSSMB"], e["peakRSSMB"] <= 150,
                f"{e['peakRSSMB']:.0f} MB")
    flat = search_flatness(search)
    if flat:
        add("search pack build: peak RSS flat with the tile count (200k ≤ 1.25× 100k) (issue 23)", flat["rss"],
            flat["rss"] <= 1.25, f"×{flat['rss']:.2f} ({flat['rss100']:.0f} → {flat['rss200']:.0f} MB)")
    speed_targets(add, rate, tools, scale, export)
    mg = scale.get("merge", {})
    if "byteIdentical" in mg:
        add("merge of 4 shards byte-identical to one apply (issue 12)", mg["byteIdentical"], mg["byteIdentical"],
            "yes" if mg["byteIdentical"] else "no")
    return rows


def speed_targets(add, rate, tools, scale, export):
    """The targets of issue 25: every path against the tool it replaces, in the same run."""
    p, c = rate("provision", "plain16"), rate("curl", "plain16")
    if p and c:
        add("HTTP/1.1 ≥ 1.2× curl --parallel, no latency, 16 conns (issue 25)", p / c, p / c >= 1.2, f"{p / c:.2f}×")
    pc = tools.get("provision", {}).get("plain16", {}).get("cpuPer10k")
    cc = tools.get("curl", {}).get("plain16", {}).get("cpuPer10k")
    if pc is not None and cc:
        add("HTTP/1.1 CPU s per 10k tiles ≤ curl's (issue 25)", pc / cc, pc <= cc, f"{pc:.2f} s vs {cc:.2f} s")
    for case in ("delay16", "delay64"):
        p, w = rate("provision", case), rate("wrk", case)
        if p and w:
            add(f"+20 ms, {case[5:]} conns: ≥ 95% of wrk (issue 25)", p / w, p / w >= 0.95, f"{p / w:.2f}×")
    h2 = scale.get("h2", {}).get("tools", {})
    hp, hl = h2.get("provision", {}).get("tilesPerSecond"), h2.get("h2load", {}).get("tilesPerSecond")
    if hp and hl:
        add("HTTPS/HTTP/2 apply ≥ 50% of h2load (issue 25)", hp / hl, hp / hl >= 0.5, f"{hp / hl:.0%}")
    export = export or {}
    pm, conv = export.get("provisionPMTiles", {}), export.get("pmtilesConvert", {})
    mb, raw = export.get("provisionMBTiles", {}), export.get("sqlite3", {})
    ok = lambda e: e.get("rc") == 0 and e.get("seconds")
    if ok(mb) and ok(raw):
        r = mb["seconds"] / raw["seconds"]
        add("MBTiles export ≤ 1.5× the sqlite3 copy (issue 25)", r, r <= 1.5, f"{r:.2f}× its time")
    if ok(pm) and ok(conv):
        r = conv["seconds"] / pm["seconds"]
        add("PMTiles export ≥ 2× pmtiles-convert's tiles/s (issue 25)", r, r >= 2, f"{r:.2f}×")
    if ok(pm) and ok(raw):
        r = pm["seconds"] / raw["seconds"]
        add("PMTiles export ≤ 2× the sqlite3 copy (issue 25)", r, r <= 2, f"{r:.2f}× its time")
    single, copy = scale.get("apply", {}), scale.get("sqlite3", {})
    if single.get("rc") == 0 and copy.get("rc") == 0 and copy.get("seconds"):
        r = single["seconds"] / copy["seconds"]
        add(f"{single['tiles']:,}-tile apply from MBTiles ≤ 1.3× the sqlite3 copy (issue 25)", r, r <= 1.3,
            f"{r:.2f}× its time")
    sh, mg = scale.get("shards", {}), scale.get("merge", {})
    if sh.get("ok") and mg.get("rc") == 0 and mg.get("seconds") and sh.get("maxSeconds"):
        r = mg["seconds"] / sh["maxSeconds"]
        add(f"merge of {sh['count']} shards no slower than the slowest shard (issue 25)", r, r <= 1.0,
            f"{mg['seconds']:.1f} s vs {sh['maxSeconds']:.1f} s")


def routing_table(routing):
    """The routing part: a routing pack cut out of a Valhalla build by provision and by valhalla_build_extract."""
    g = routing.get("graph", {})
    tiles = g.get("tiles", {})
    lines = [
        f"A Valhalla graph built by valhalla_build_tiles from a synthetic OSM grid ({tiles.get('2', 0):,} level-2, "
        f"{tiles.get('1', 0):,} level-1, {tiles.get('0', 0):,} level-0 tiles, {g.get('bytes', 0) / 1e6:.1f} MB; "
        f"built in {g.get('buildSeconds', 0):.0f} s); HTTP: nginx on 127.0.0.1 ({routing.get('httpSource', '')}); "
        "tiles: every level's tiles in the extract (the same paths and bytes in every tool's, checked); "
        "×: the peer's seconds ÷ provision's",
        "",
        "| region | tool | tiles | seconds | CPU s | peak RSS MB | extract MB | × |",
        "|---|---|---|---|---|---|---|---|",
    ]
    names = routing.get("tools", {})
    for size in routing.get("sizes", []):
        peer = size.get("valhallaBuildExtract") or {}
        for tool in ("valhallaBuildExtract", "provisionDirectory", "provisionHTTP"):
            e = size.get(tool)
            if not e:
                continue
            label = names.get(tool, tool)
            label = label if tool == "valhallaBuildExtract" else f"**{label}**"
            if e.get("rc", 0) != 0 or e.get("timedOut"):
                lines.append(f"| {size['label']} | {label} | failed (exit {e.get('rc')}) | | | | | |")
                continue
            ratio = ""
            if tool != "valhallaBuildExtract" and peer.get("rc", 1) == 0 and e.get("seconds"):
                ratio = f"×{peer['seconds'] / e['seconds']:.2f}"
            lines.append(f"| {size['label']} | {label} | {e['tiles']:,} | {e['seconds']:.2f} | {e.get('cpuSeconds', 0):.2f} "
                         f"| {e.get('peakRSSMB', 0):.0f} | {e.get('bytes', 0) / 1e6:.1f} | {ratio} |")
        if not size.get("sameTiles", True):
            lines.append(f"| {size['label']} | **the extracts hold different tiles** | | | | | | |")
    return lines


def merge_and_print(parts, out_path):
    doc = {"schemaVersion": 1, "kind": "benchmark", "machine": {
        "cpus": os.cpu_count(), "system": platform.platform(), "python": platform.python_version()},
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    peers = plans = scale = export = search = routing = None
    for path in parts:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            part = json.load(f)
        if part.get("part") == "scale":
            scale = part
            doc["scale"] = part
        elif part.get("part") == "search":
            search = part
            doc["search"] = part
        elif part.get("part") == "export":
            export = part
            doc["export"] = part
        elif part.get("part") == "routing":
            routing = part
            doc["routing"] = part
        elif "tools" in part:
            peers = part
            doc["peers"] = part
        else:
            plans = part
            doc["plans"] = part
    doc["targets"] = targets(peers, plans, scale, export, search)
    lines = []
    if peers:
        lines += ["## Downloads", ""] + peers_table(peers) + [""]
    if plans:
        lines += ["## Plans", ""] + plans_table(plans) + [""]
    if scale:
        lines += ["## Scale", ""] + scale_table(scale) + [""]
    if export:
        lines += ["## Export", ""] + export_table(export) + [""]
    if search:
        lines += ["## Search packs", ""] + search_table(search) + [""]
    if routing:
        lines += ["## Routing packs", ""] + routing_table(routing) + [""]
    if doc["targets"]:
        lines += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        lines += [f"| {t['target']} | {t['shown']} | {'yes' if t['met'] else 'NO'} |" for t in doc["targets"]]
    doc["table"] = "\n".join(lines)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=2)
    print("\n".join(lines))
