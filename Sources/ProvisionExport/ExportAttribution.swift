import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionModel
import ProvisionReports

/// What an export must credit, written beside it as `ATTRIBUTION.md` (for people) and
/// `attribution.json` (for apps): a bundle directory's, and a patch's.
///
/// Why beside the data: an offline app ships the files, not the style or TileJSON the credit
/// came from, and OSM's ODbL and each provider's terms require the credit wherever the map is
/// shown. Each exported tileset is credited under the name its file has (`NAME.pmtiles`); the
/// job's own attribution and its search and routing packs' come from the store's lock.
public struct ExportAttribution: Equatable, Sendable {
    /// The human file's name.
    public static let markdownName = "ATTRIBUTION.md"
    /// The machine-readable file's name.
    public static let jsonName = "attribution.json"
    /// Bumped on every change to `attribution.json`'s shape (Jobs/schema/attribution.schema.json).
    public static let schemaVersion = 1

    /// What is credited: the exported tilesets', then the lock's other entries.
    public var entries: [Attribution]
    /// The exported tilesets that declare no attribution, by name.
    public var unattributed: [String]

    public init(entries: [Attribution], unattributed: [String] = []) {
        self.entries = entries
        self.unattributed = unattributed
    }

    /// The attribution of an export of `sources` from a store whose lock is `lock`: each
    /// tileset's (`ExportCatalog.Source.attribution`), and the lock's entries that are not
    /// tilesets' (the job's own, search and routing packs').
    public init(sources: [ExportCatalog.Source], lock: LockDocument?) {
        var entries: [Attribution] = []
        var unattributed: [String] = []
        for source in sources {
            if let text = source.attribution {
                entries.append(Attribution(kind: .archive, source: source.name, text: text))
            } else {
                unattributed.append(source.name)
            }
        }
        let tiled: Set<Attribution.Kind> = [.styleSource, .tileset, .archive]
        entries += (lock?.attribution ?? []).filter { !tiled.contains($0.kind) }
        self.init(entries: entries, unattributed: unattributed)
    }

    /// `ATTRIBUTION.md`: each source with its text (HTML turned into Markdown, links kept) and
    /// licence, then the tilesets that declare none.
    public var markdown: String {
        var out = """
            # Attribution

            The data here comes from the sources below. Show each credit wherever the map is shown
            (MapLibre's attribution control shows the style sources' own; an app that draws the
            map some other way shows these).


            """
        if entries.isEmpty { out += "No source declares an attribution.\n" }
        for entry in entries {
            out += "- **\(entry.source)** (\(Self.label(entry.kind))): \(entry.markdown)\n"
            if let licence = entry.licence { out += "  - Licence: \(licence)\n" }
            if let url = entry.url { out += "  - See <\(url)>\n" }
        }
        if !unattributed.isEmpty {
            out += "\nDeclaring no attribution (credit them as their providers require): "
                + listed(unattributed.map { "**\($0)**" }) + ".\n"
        }
        return out
    }

    /// `attribution.json`: `{"schemaVersion", "kind": "attribution", "attribution": […], "unattributed": […]}`.
    public var json: JSONValue {
        ["schemaVersion": .int(Self.schemaVersion), "kind": "attribution", "attribution": .array(entries.map(\.json)),
         "unattributed": .array(unattributed.map { .string($0) })]
    }

    /// The two files' names and bytes.
    public var files: [(name: String, data: Data)] {
        [(Self.markdownName, Data(markdown.utf8)),
         (Self.jsonName, json.data(JSONValue.WriteOptions(sortedKeys: true, pretty: true)) + Data("\n".utf8))]
    }

    /// Writes both files into `directory` (beside a patch file), each atomically.
    public func write(into directory: URL) throws(ProvisionError) {
        for file in files {
            let destination = directory.appendingPathComponent(file.name)
            do {
                let output = try ExportFile(destination: destination)
                do {
                    try output.write(file.data)
                    try output.commit()
                } catch {
                    output.discard()
                    throw error
                }
            } catch {
                throw ProvisionError(store: error, context: "cannot write \(destination.path)", kind: .cannotWriteStore)
            }
        }
    }

    /// How `ATTRIBUTION.md` calls a kind of source.
    static func label(_ kind: Attribution.Kind) -> String {
        switch kind {
        case .styleSource: return "style source"
        case .tileset: return "tileset"
        case .archive: return "tiles"
        case .searchPack: return "search pack"
        case .routingPack: return "routing pack"
        case .job: return "the job"
        }
    }
}
