import Foundation
import ProvisionFoundation

/// The attribution a store built from a plan carries, and the sources that declare none.
public struct AttributionCollection: Equatable, Sendable {
    /// Every declared attribution: the style packs' tiled sources (in job and style order), the
    /// regions' TileJSONs, the search packs, then the job's own.
    public var entries: [Attribution] = []
    /// The sources that declare none, each once: (what `Attribution.source` would name, and the
    /// words a note or an error names it with).
    public var missing: [(source: String, subject: String)] = []

    public init() {}

    public static func == (a: AttributionCollection, b: AttributionCollection) -> Bool {
        a.entries == b.entries && a.missing.elementsEqual(b.missing) { $0.source == $1.source && $0.subject == $1.subject }
    }

    /// The plan's notes about the sources without attribution, one each.
    public func notes(jobHasAttribution: Bool) -> [PlanNote] {
        missing.map { missing in
            PlanNote(subject: "attribution", message: "\(missing.subject) declares no attribution (no \"attribution\" in its "
                     + "TileJSON or style): " + (jobHasAttribution ? "only the job's own \"attribution\" credits it"
                                                 : "nothing credits it in the lock, archives or bundles"))
        }
    }
}

extension Plan {
    /// What the store this plan builds must credit: each tiled source's attribution (its style
    /// entry's, else its TileJSON's, as MapLibre shows them), each region TileJSON's, each
    /// search pack's (its sources', joined), each routing pack's (with its licence) and the job's
    /// own (`job.attribution`).
    public func attribution(job: Job) -> AttributionCollection {
        var collection = AttributionCollection()
        func add(_ kind: Attribution.Kind, _ source: String, _ text: String?, subject: @autoclosure () -> String) {
            if let text {
                let entry = Attribution(kind: kind, source: source, text: text)
                if !collection.entries.contains(entry) { collection.entries.append(entry) }
            } else if !collection.missing.contains(where: { $0.source == source }) {
                collection.missing.append((source, subject()))
            }
        }
        var packTileJSONs = Set<String>()
        for pack in stylePacks {
            let style = document(pack.styleURL)
            for source in pack.sources {
                if let url = source.tileJSONURL { packTileJSONs.insert(url) }
                let text = Attribution.declared(styleSource: style?["sources"]?[source.name],
                                                tileJSON: source.tileJSONURL.flatMap(document))
                add(.styleSource, "\(pack.id)/\(source.name)", text, subject: "source '\(source.name)' of style pack '\(pack.id)'")
            }
        }
        for region in job.regions {
            let urls = Set(regions.filter { $0.regionID == region.id }
                .flatMap { $0.resources.wanted.filter { $0.kind == .source }.map(\.url) }).subtracting(packTileJSONs)
            for url in urls.sorted() {
                add(.tileset, url, Attribution.declared(styleSource: nil, tileJSON: document(url)),
                    subject: "tileset \(URLSecrets().redact(url)) of region '\(region.id)'")
            }
            for template in region.tilesets where template.contains("{") {
                add(.tileset, template, nil, subject: "tileset \(URLSecrets().redact(template)) of region '\(region.id)' (a bare template)")
            }
        }
        for pack in searchPacks {
            if let text = Attribution.joined(pack.sources.map(\.attribution)) {
                add(.searchPack, pack.pack.id, text, subject: "search pack '\(pack.pack.id)'")
            }
        }
        // A routing pack credits what it declares, with its licence; one that declares nothing has no
        // TileJSON or style to have missed it from, so it is no note.
        for pack in job.routingPacks where job.regions.contains(where: { $0.routingPacks.contains(pack.id) }) {
            guard let text = pack.attribution, !text.allSatisfy(\.isWhitespace) else { continue }
            let entry = Attribution(kind: .routingPack, source: pack.id, text: text, licence: pack.licence)
            if !collection.entries.contains(entry) { collection.entries.append(entry) }
        }
        if let own = job.attribution { collection.entries.append(own) }
        return collection
    }

    /// The stored or fetched document at `url`, parsed; nil when there is none or it is not JSON.
    private func document(_ url: String) -> JSONValue? {
        // A document that does not parse credits nothing: the planner already refused or noted it.
        documents[url].flatMap { try? JSONValue.parse($0.data) }
    }
}
