import Foundation
import PlaceIndex
import ProvisionCodecs
import ProvisionFoundation
import ProvisionModel

/// Why a search pack cannot be planned or built: the job names something its documents do not
/// have, or a source's schema is unknown and no layer mapping was given (exit 65).
public struct SearchPackError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// Resolves a job's search packs against its plan and decides which files an apply builds.
public enum SearchPackPlanning {
    /// Bumped when the builder's output for the same tiles changes, so that every pack is rebuilt.
    static let builderVersion = 1

    /// The job's search packs with their vector sources and regions resolved from `plan`, and
    /// what the apply does with each file given the lock's `records` and the files in `directory`
    /// (the store's).
    ///
    /// - Throws: `SearchPackError` for a source the plan has no vector tiles of, or whose TileJSON
    ///   layers are neither OpenMapTiles nor Mapbox Streets v8 when the pack gives no `layers`.
    public static func plan(_ job: Job, plan: Plan, records: [SearchPackRecord], directory: URL) throws -> [SearchPackPlan] {
        try job.searchPacks.map { pack in
            let regions = job.regions.filter { $0.searchPacks.contains(pack.id) }.map(\.id)
            let sources = try resolveSources(pack, plan: plan)
            for source in sources { try checkSchema(pack, source: source) }
            let settings = settingsDigest(pack, sources: sources, regions: regions, plan: plan)
            var resolved = SearchPackPlan(pack: pack, sources: sources, regions: regions, settingsDigest: settings,
                                          action: .build, reason: "")
            let record = records.first { $0.id == pack.id }
            (resolved.action, resolved.reason) = decide(resolved, record: record, directory: directory, plan: plan)
            return resolved
        }
    }

    /// Build or keep, and why: built when the lock has no record of it, its file is missing or not
    /// the one the lock recorded, its settings changed, or a tile it reads is added, removed or
    /// fetched again.
    static func decide(_ pack: SearchPackPlan, record: SearchPackRecord?, directory: URL, plan: Plan)
        -> (SearchPackAction, String) {
        guard let record else { return (.build, "new") }
        let url = directory.appendingPathComponent(pack.pack.file)
        // A file that cannot be read is built again, as a missing one is.
        guard let file = try? SHA256.file(at: url) else { return (.build, "file missing") }
        guard "sha256:" + file.hex == record.digest else { return (.build, "file changed since it was built") }
        guard record.settingsDigest == pack.settingsDigest else { return (.build, "settings changed") }
        if tilesChange(pack, plan: plan) { return (.build, "tiles change") }
        return (.keep, "")
    }

    /// For a repair: each kept pack whose file SQLite or the pack's own checks find damaged
    /// (`PlaceIndexDatabase.problems`) is built again, even when its digest is the lock's.
    public static func recheck(_ packs: inout [SearchPackPlan], directory: URL) {
        for index in packs.indices where packs[index].action == .keep {
            let problems = PlaceIndexDatabase.problems(directory.appendingPathComponent(packs[index].pack.file))
            if let first = problems.first { (packs[index].action, packs[index].reason) = (.build, "file damaged: \(first)") }
        }
    }

    /// One note per source whose TileJSON lacks layers the pack's schema reads (OpenMapTiles or
    /// Mapbox Streets v8 told apart from most of their layers, or the pack's mapping): their
    /// features are not in the index, which a user should hear before the apply, not after.
    public static func notes(_ packs: [SearchPackPlan]) -> [PlanNote] {
        packs.flatMap { pack in
            pack.sources.compactMap { source -> PlanNote? in
                guard let layers = source.vectorLayers else { return nil }
                // A schema that cannot be told apart was already refused by `checkSchema`.
                guard let schema = try? PlaceSchema.detect(vectorLayerIDs: layers, source: source.name,
                                                           mapping: pack.pack.layers.map(layerRules)) else { return nil }
                let missing = schema.layers.keys.filter { !layers.contains($0) }.sorted()
                guard !missing.isEmpty else { return nil }
                return PlanNote(subject: "search pack '\(pack.pack.id)'",
                                message: "source \(source.name) has no \(missing.count == 1 ? "layer" : "layers") "
                                    + "\(listed(missing)) " + (schema.name == "custom" ? "the pack's layer mapping names"
                                        : "of its \(schema.name) schema") + " (its vector layers: "
                                    + "\(layers.joined(separator: ", "))), so the index holds none of "
                                    + "\(missing.count == 1 ? "that layer's" : "those layers'") features")
            }
        }
    }

    /// Whether the apply of `plan` may change a tile `pack` reads.
    static func tilesChange(_ pack: SearchPackPlan, plan: Plan) -> Bool {
        let templates = Set(pack.sources.map(\.urlTemplate))
        if plan.refresh != nil || plan.unverifiedStore != nil || plan.repairRows > 0
            || plan.refetchTemplates.contains(where: templates.contains) { return true }
        return plan.regions.contains { row in
            pack.regions.contains(row.regionID)
                && (row.zoomChanges.contains { templates.contains($0.urlTemplate) && $0.counts.hasChanges }
                    || row.staleTileCounts.contains { templates.contains($0.urlTemplate) && $0.count > 0 })
        }
    }

    /// The vector sources `pack` names, each template once, in the order named.
    static func resolveSources(_ pack: SearchPack, plan: Plan) throws -> [SearchPackSource] {
        var out: [SearchPackSource] = []
        func add(_ source: SearchPackSource) {
            if !out.contains(where: { $0.urlTemplate == source.urlTemplate }) { out.append(source) }
        }
        for name in pack.sources {
            if name.contains("://") {
                add(try tileset(name, pack: pack, plan: plan))
                continue
            }
            let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
            guard let style = plan.stylePacks.first(where: { $0.id == parts[0] }) else {
                throw SearchPackError("search pack '\(pack.id)': style pack '\(parts[0])' was not resolved")
            }
            let vector = style.overview.sources.filter { $0.type == "vector" }.map(\.name)
            let chosen = parts.count == 2 ? [parts[1]] : vector
            if parts.count == 2, !vector.contains(parts[1]) {
                throw SearchPackError("search pack '\(pack.id)': style pack '\(style.id)' has no vector source '\(parts[1])'"
                                      + (vector.isEmpty ? "" : "; its vector sources: " + vector.joined(separator: ", ")))
            }
            if chosen.isEmpty {
                throw SearchPackError("search pack '\(pack.id)': style pack '\(style.id)' has no vector source to index")
            }
            for sourceName in chosen {
                guard let summary = style.sources.first(where: { $0.name == sourceName }) else { continue }
                // A TileJSON that is not JSON was already a plan failure; without it the schema is told by the tiles' layers.
                let tileJSON = summary.tileJSONURL.flatMap { plan.documents[$0] }.flatMap { try? JSONValue.parse($0.data) }
                add(source(name: "\(style.id)/\(sourceName)", template: summary.urlTemplate, tileJSON: tileJSON, plan: plan))
            }
        }
        return out
    }

    /// A region's tileset (a TileJSON URL or a tile URL template) as a search pack source.
    static func tileset(_ url: String, pack: SearchPack, plan: Plan) throws -> SearchPackSource {
        let tileJSON = plan.documents[url].flatMap { try? JSONValue.parse($0.data) }
        let template = tileJSON?["tiles"]?.arrayValue?.first?.stringValue ?? url
        guard plan.regions.contains(where: { row in row.tileSets.contains { $0.urlTemplate == template } }) else {
            throw SearchPackError("search pack '\(pack.id)': tileset \(url) was not resolved to tiles any region draws")
        }
        return source(name: url, template: template, tileJSON: tileJSON, plan: plan)
    }

    static func source(name: String, template: String, tileJSON: JSONValue?, plan: Plan) -> SearchPackSource {
        let set = plan.regions.lazy.flatMap(\.tileSets).first { $0.urlTemplate == template }
        let layers = tileJSON?["vector_layers"]?.arrayValue.map { $0.compactMap { $0["id"]?.stringValue }.sorted() }
        return SearchPackSource(name: name, urlTemplate: template, pixelRatio: set?.pixelRatio ?? 1, isTMS: set?.isTMS ?? false,
                                vectorLayers: layers, attribution: tileJSON?["attribution"]?.stringValue ?? "")
    }

    /// Refuses a source whose TileJSON layers match no known schema when the pack gives no mapping,
    /// or match none of the mapping's layers.
    static func checkSchema(_ pack: SearchPack, source: SearchPackSource) throws {
        guard let layers = source.vectorLayers else { return }
        do {
            _ = try PlaceSchema.detect(vectorLayerIDs: layers, source: source.name, mapping: pack.layers.map(layerRules))
        } catch {
            throw SearchPackError("search pack '\(pack.id)': \(error)")
        }
    }

    /// The index's layer rules of a pack's `layers`.
    static func layerRules(_ mapping: [String: SearchLayerMapping]) -> [String: LayerRule] {
        mapping.compactMapValues { rule in
            PlaceKind(rawValue: rule.kind).map {
                LayerRule(kind: $0, classKey: rule.classKey, subclassKey: rule.subclassKey, rankKeys: rule.rankKeys)
            }
        }
    }

    /// sha256 of what decides the file besides the tiles: the pack's settings, its sources, its
    /// regions' definitions, the file format and builder versions.
    static func settingsDigest(_ pack: SearchPack, sources: [SearchPackSource], regions: [String], plan: Plan) -> String {
        let layers = (pack.layers ?? [:]).sorted { $0.key < $1.key }.map { layer, rule -> JSONValue in
            ["layer": .string(layer), "kind": .string(rule.kind), "class": .string(rule.classKey),
             "subclass": rule.subclassKey.map { .string($0) } ?? .null, "rank": .array(rule.rankKeys.map { .string($0) })]
        }
        let templates = Set(sources.map(\.urlTemplate))
        let definitions = plan.regions.filter { row in regions.contains(row.regionID) && row.tileSets.contains { templates.contains($0.urlTemplate) } }
            .sorted { $0.key < $1.key }
            .map { JSONValue.string($0.regionID + " " + SHA256.hex($0.definition)) }
        let settings: JSONValue = [
            "format": .int(PlaceIndexDatabase.schemaVersion), "builder": .int(builderVersion),
            "id": .string(pack.id), "names": .array(pack.names.map { .string($0) }), "layers": .array(layers),
            "sources": .array(sources.map { source in
                ["name": .string(source.name), "template": .string(source.urlTemplate), "pixelRatio": .int(source.pixelRatio),
                 "tms": .bool(source.isTMS), "attribution": .string(source.attribution),
                 "vectorLayers": source.vectorLayers.map { .array($0.map { .string($0) }) } ?? .null]
            }),
            "regions": .array(regions.map { .string($0) }), "definitions": .array(definitions),
        ]
        return "sha256:" + SHA256.hex(settings.data(.prettySorted))
    }
}
