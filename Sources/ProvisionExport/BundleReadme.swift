import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The `README.txt` of a bundle: what is in it and how MapLibre GL JS, Android and iOS open it.
enum BundleReadme {
    static func text(store: String, packs: [ExportCatalog.StylePack], styles: [String], files: [ExportResult.File],
                     bundle: ExportResult.Bundle, layout: BundleExport.Layout) -> String {
        let example = styles.first ?? "STYLE.style.json"
        var out = """
            \(BundleDirectory.marker)
            \(String(repeating: "=", count: BundleDirectory.marker.count))

            Written by `provision export --format bundle` from the store "\(URL(fileURLWithPath: store).lastPathComponent)".
            It opens offline, with no database and no network.

            What is here
            ------------

            """
        for (pack, style) in zip(packs, styles) {
            out += "- \(style): the style of style pack '\(pack.id)' (\(pack.styleURL)).\n"
        }
        for file in files {
            out += "- \(URL(fileURLWithPath: file.path).lastPathComponent): source '\(file.source)', "
                + "\(plural(file.tileCount, "tile")), z\(file.minZoom)-\(file.maxZoom), "
                + "\(file.tileFormat == "pbf" ? "vector tiles (gzip)" : file.tileFormat), PMTiles v3.\n"
        }
        if bundle.spriteFiles > 0 {
            out += "- sprites/: \(plural(bundle.spriteFiles, "sprite file")) (NAME.json, NAME.png, NAME@2x.json, NAME@2x.png).\n"
        }
        if bundle.glyphFiles > 0 {
            out += "- fonts/: \(plural(bundle.glyphFiles, "glyph range")) (FONT STACK/START-END.pbf).\n"
        }
        for pack in bundle.searchPacks {
            out += "- \(pack.path): search pack '\(pack.pack)', \(plural(pack.entries, "place")), an SQLite file an app "
                + "searches offline (see \"Searching places\" below).\n"
        }
        for pack in bundle.routingPacks {
            out += "- \(pack.path): routing pack '\(pack.pack)', \(plural(pack.tiles, "graph tile")), a Valhalla tile extract an "
                + "app routes on offline (see \"Routing\" below).\n"
        }
        for stack in layout.skippedFontStacks {
            out += "- Left out: the font stack \"\(stack)\", whose name cannot be a directory name.\n"
        }
        for source in bundle.onlineSources {
            out += "- Not here: source \(source) of a style still points at the network.\n"
        }
        out += "- \(ExportAttribution.markdownName), \(ExportAttribution.jsonName): what the data must credit, for people "
            + "and for apps; show it wherever the map is shown.\n"
        out += """

            Relative URLs
            -------------
            In each style, every URL without a scheme is relative to this directory:
            "url": "pmtiles://NAME.pmtiles" in a source, "sprite" (or each sprite's "url") and
            "glyphs". A web page resolves them against itself; MapLibre Native resolves no relative
            URL, so an app prefixes each one with the directory's location BASE (ending in "/")
            before it loads the style:

                "pmtiles://NAME.pmtiles"          -> "pmtiles://BASE" + "NAME.pmtiles"
                "sprites/NAME"                    -> BASE + "sprites/NAME"
                "fonts/{fontstack}/{range}.pbf"   -> BASE + "fonts/{fontstack}/{range}.pbf"

            MapLibre GL JS (a page served from this directory, with HTTP range requests)
            ---------------------------------------------------------------------------
                import { Protocol } from "pmtiles";
                maplibregl.addProtocol("pmtiles", new Protocol().tile);
                new maplibregl.Map({ container: "map", style: "\(example)" });

            Android (MapLibre Native 11.7 or later)
            --------------------------------------
            The asset file source reads whole files and ignores byte ranges, so copy this
            directory out of the APK first (for example to filesDir/bundle), then use
            BASE = "file://" + that path + "/" (the archive is read as pmtiles://file:///…):

                val dir = File(context.filesDir, "bundle")   // copied from the APK's assets
                val base = "file://" + dir.absolutePath + "/"
                val style = JSONObject(File(dir, "\(example)").readText())
                val sources = style.getJSONObject("sources")
                for (name in sources.keys()) {
                    val source = sources.getJSONObject(name)
                    val url = source.optString("url")
                    if (url.startsWith("pmtiles://") && !url.substring(10).contains("://"))
                        source.put("url", "pmtiles://" + base + url.substring(10))
                }
                // a sprite array instead of a string: prefix each entry's "url"
                if (style.has("sprite")) style.put("sprite", base + style.getString("sprite"))
                if (style.has("glyphs")) style.put("glyphs", base + style.getString("glyphs"))
                map.setStyle(Style.Builder().fromJson(style.toString()))

            iOS (MapLibre Native 6.10 or later)
            -----------------------------------
            Add this directory to the app as a folder reference named "bundle"; asset:// URLs
            resolve in the app's resources, so BASE = "asset://bundle/"
            (the archive is read as pmtiles://asset://bundle/NAME.pmtiles). Rewrite the same three
            kinds of URL as on Android, write the style to a file and give its file URL to
            MLNMapView.styleURL.

            """
        if !bundle.searchPacks.isEmpty { out += searching }
        if let pack = bundle.routingPacks.first { out += routing(example: pack.path) }
        return out
    }

    /// How an app routes on the bundle's routing packs with Valhalla.
    static func routing(example: String) -> String {
        """

            Routing (routing/PACK.tar)
            --------------------------
            Each routing/PACK.tar is a Valhalla tile extract: an uncompressed tar whose first member,
            index.bin, says where each graph tile lies. Valhalla (3.x; pyvalhalla, the Android and
            iOS bindings) opens it with this configuration, the rest of the config as
            valhalla_build_config writes it. Give mjolnir.tile_extract the file's path on the
            device and no mjolnir.tile_dir: Valhalla memory-maps the tar and finds every tile
            through index.bin.

                {
                  "mjolnir": {
                    "tile_extract": "BASE/\(example)"
                  }
                }

            BASE is this directory's path on the device (a plain path, not a URL). On Android copy
            the tar out of the APK first (Valhalla needs a file it can map). With pyvalhalla:
            valhalla.Actor(config).route(request).

            """
    }

    /// How an app searches the bundle's search packs: the query provision's own `search` runs.
    static var searching: String {
        let query = PlaceIndexDatabase.searchSQL.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        return """

            Searching places (search/PACK.db)
            ---------------------------------
            Each search/PACK.db is an SQLite file the system SQLite of Android and iOS opens
            read-only, with no network: the places of the bundle's tiles, their names in an FTS4
            table (diacritics folded: "hameentie" finds "Hämeentie") and their
            positions in an R*Tree. An app searches it with this query, the one
            'provision search' runs (the section "provision search" of provision's README and
            docs/search-packs.md describe it, and the query for an SQLite without the R*Tree module):

            \(query)

            :match is the words the user typed, each followed by * ("sornaisten ran" ->
            "sornaisten* ran*"), :phrase the words in double quotes, :tokens their count;
            :lon, :lat where the user is and :lon_scale cos(:lat); :west, :south, :east, :north
            the box to search (-180, -90, 180, 90: everywhere); :region a region id, or NULL for
            every region; :limit the number of answers.

            """
    }
}
