import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionPlanning
import ProvisionStore

/// `provision export --format bundle --out DIR`: a directory a MapLibre app or web page opens
/// offline with no database.
///
/// It holds each style pack's style (`PACK.style.json`) with its tiled sources reading
/// `pmtiles://SOURCE.pmtiles` and its sprite and glyph URLs relative to the directory; one
/// PMTiles archive per tileset (also a region's extra tilesets, which no style draws); the
/// sprites (`sprites/NAME[@2x].{json,png}`); the glyph ranges stored
/// (`fonts/FONT STACK/START-END.pbf`); the search packs the lock records (`search/PACK.db`,
/// whole: a pack spans its regions, and `place_regions` lets an app keep to one); the routing
/// packs' tile extracts (`routing/PACK.tar`, which Valhalla opens as `mjolnir.tile_extract`); `README.txt`,
/// which says how each platform loads it and the query an app searches with; and what the data
/// must credit (`ExportAttribution`: `ATTRIBUTION.md`, `attribution.json`).
struct BundleExport {
    let exporter: Exporter
    let catalog: ExportCatalog
    let store: StorePath
    let out: URL

    func run() throws(ProvisionError) -> ExportResult {
        let regions = exporter.regions.map(Set.init)
        let packs = catalog.stylePacks.filter { pack in regions.map { !$0.isDisjoint(with: pack.regionRows) } ?? true }
        // The tilesets the chosen packs draw, and the regions' extra tilesets, which no pack draws.
        let drawn = Set(packs.flatMap { $0.sourceNames.values })
        let drawnByAnyPack = Set(catalog.stylePacks.flatMap { $0.sourceNames.values })
        let sources = catalog.sources.filter { drawn.contains($0.name) || !drawnByAnyPack.contains($0.name) }
        let bundle: BundleDirectory
        do {
            bundle = try BundleDirectory(destination: out)
        } catch {
            throw ProvisionError(store: error, context: "cannot write the bundle \(out.path)", kind: .cannotWriteStore)
        }
        defer { bundle.discard() }
        // Damaged packs are refused before any tile is written.
        let searchPacks = try writeSearchPacks(into: bundle)
        let routingPacks = try writeRoutingPacks(into: bundle)
        exporter.progress.emit(.bundleStarted(store: store.display, out: out.path, stylePacks: packs.count, files: sources.count,
                                              tiles: sources.map(\.set.tileCount).reduce(0, +)))

        var files: [ExportResult.File] = []
        for source in sources {
            let relative = "\(source.name).pmtiles"
            let staged = try writing { try bundle.url(for: relative) }
            files.append(try exporter.export(source, format: .pmtiles, to: staged,
                                             finalURL: out.appendingPathComponent(relative)))
        }
        var layout = Layout()
        var styles: [String] = []
        var online: [String] = []
        for pack in packs {
            let archives = pack.sourceNames.mapValues { "\($0).pmtiles" }
            var spritePaths: [String: String] = [:]
            for base in pack.resolved.spriteBases {
                spritePaths[base] = try writeSprite(base, into: bundle, layout: &layout)
            }
            var glyphs: String?
            if let template = pack.resolved.glyphsTemplate {
                glyphs = try writeGlyphs(template, fontStacks: pack.resolved.fontStacks, into: bundle, layout: &layout)
            }
            let style = BundleStyle.rewrite(pack.style, archives: archives, sprites: spritePaths, glyphs: glyphs)
            let name = "\(pack.id).style.json"
            try writing { try bundle.write(style.data(JSONValue.WriteOptions(sortedKeys: false, pretty: true)) + Data("\n".utf8), to: name) }
            styles.append(name)
            online += pack.resolved.sources.filter { pack.sourceNames[$0.name] == nil }.map { "\(pack.id): \($0.name)" }
        }
        let summary = ExportResult.Bundle(directory: out.path, styles: styles, spriteFiles: layout.spriteFiles,
                                          glyphFiles: layout.glyphFiles, onlineSources: online, searchPacks: searchPacks,
                                          routingPacks: routingPacks)
        let readme = BundleReadme.text(store: store.display, packs: packs, styles: styles, files: files, bundle: summary,
                                       layout: layout)
        try writing { try bundle.write(Data(readme.utf8), to: "README.txt") }
        for file in ExportAttribution(sources: sources, lock: exporter.lock).files {
            try writing { try bundle.write(file.data, to: file.name) }
        }
        try writing { try bundle.commit() }
        return exporter.finish(ExportResult(store: store.display, format: "bundle", files: files, bundle: summary))
    }

    /// Where sprites and glyphs went, so styles sharing them share files.
    struct Layout {
        /// Relative sprite base by sprite URL.
        var sprites: [String: String] = [:]
        /// Relative glyph template by glyph URL template.
        var glyphs: [String: String] = [:]
        var spriteFiles = 0
        var glyphFiles = 0
        /// Font stacks whose names cannot be a directory name (a `/`), left out.
        var skippedFontStacks: [String] = []
    }

    /// Copies each search pack the lock records (`search/<pack>.db`) into the bundle, the copy's
    /// bytes checked against the lock's digest: a pack missing or changed since it was built is
    /// damaged input (65), named. A store without a lock has no pack to vouch for.
    private func writeSearchPacks(into bundle: BundleDirectory) throws(ProvisionError) -> [ExportResult.SearchPackFile] {
        var written: [ExportResult.SearchPackFile] = []
        for record in exporter.lock?.searchPacks ?? [] {
            // Copied as a file, never held in memory (a pack may be gigabytes), and checked as copied.
            let bytes = try PackCopy.copy(record.file, from: store, into: bundle, digest: record.digest, unreadable: { error in
                ProvisionError(.invalidJob, "search pack '\(record.id)': \(record.file) cannot be read in the store at "
                               + "\(store.display) (\(describe(error))); run 'provision apply' to build it again", cause: error)
            }, damaged: {
                ProvisionError(.invalidJob, "search pack '\(record.id)': \(record.file) in the store at \(store.display) is "
                               + "damaged: its bytes are not the ones the lock recorded; run 'provision apply' to build it again")
            })
            written.append(ExportResult.SearchPackFile(path: record.file, pack: record.id, entries: record.entries,
                                                       bytes: bytes))
        }
        return written
    }

    /// Writes the stored files of the sprite at `base`; returns its relative base (`sprites/NAME`).
    private func writeSprite(_ base: String, into bundle: BundleDirectory, layout: inout Layout) throws(ProvisionError) -> String {
        if let known = layout.sprites[base] { return known }
        var name = "sprites/" + ExportCatalog.derivedName(base)
        var counter = 2
        while layout.sprites.values.contains(name) {
            name = "sprites/" + ExportCatalog.derivedName(base) + "-\(counter)"
            counter += 1
        }
        layout.sprites[base] = name
        for ratio in [1, 2] {
            for kind in [ResourceKind.spriteJSON, .spriteImage] {
                let url = SpriteURLs.url(base: base, ratio: ratio, kind: kind)
                guard let data = try reading({ try exporter.database.resourceData(url: url) }), !data.isEmpty else { continue }
                let file = name + (ratio > 1 ? "@2x" : "") + (kind == .spriteJSON ? ".json" : ".png")
                try writing { try bundle.write(data, to: file) }
                layout.spriteFiles += 1
            }
        }
        return name
    }

    /// Writes every stored glyph range of `fontStacks` under `template`; returns the relative
    /// template (`fonts/{fontstack}/{range}.pbf`).
    private func writeGlyphs(_ template: String, fontStacks: [[String]], into bundle: BundleDirectory,
                             layout: inout Layout) throws(ProvisionError) -> String {
        if let known = layout.glyphs[template] { return known }
        let directory = layout.glyphs.isEmpty ? "fonts" : "fonts-\(layout.glyphs.count + 1)"
        let relative = "\(directory)/{fontstack}/{range}.pbf"
        layout.glyphs[template] = relative
        for stack in fontStacks {
            let name = stack.joined(separator: ",")
            guard !name.contains("/"), name != ".", name != "..", !name.isEmpty else {
                layout.skippedFontStacks.append(name)
                continue
            }
            for range in GlyphRanges.all {
                let url = GlyphRanges.url(template: template, fontStack: stack, range: range)
                guard let data = try reading({ try exporter.database.resourceData(url: url) }), !data.isEmpty else { continue }
                try writing { try bundle.write(data, to: "\(directory)/\(name)/\(range.description).pbf") }
                layout.glyphFiles += 1
            }
        }
        return relative
    }

    private func writing<T>(_ body: () throws -> T) throws(ProvisionError) -> T {
        do {
            return try body()
        } catch {
            throw ProvisionError(store: error, context: "cannot write the bundle \(out.path)", kind: .cannotWriteStore)
        }
    }

    private func reading<T>(_ body: () throws -> T) throws(ProvisionError) -> T {
        do {
            return try body()
        } catch {
            throw ProvisionError(store: error, context: "cannot read the store at \(store.display)", kind: .failure)
        }
    }
}
