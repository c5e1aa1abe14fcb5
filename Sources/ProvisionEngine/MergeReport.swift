import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionStore

/// What `provision merge DEVICE.db… --store OUT` prints: a line per side region, and the
/// `merge-report` document of `--json` (`Jobs/schema/merge-report.schema.json`).
enum MergeReport {
    /// The document's shape version.
    static let schemaVersion = 1

    /// The `merge-report` document; keys are sorted when serialized.
    static func document(_ result: SideLoadRun.Result) -> JSONValue {
        func counts(_ counts: SideLoadCounts) -> JSONValue {
            .object(JSONObject([("added", .int(counts.added)), ("replaced", .int(counts.replaced)), ("kept", .int(counts.kept)),
                                ("skipped", .int(counts.skipped))]))
        }
        let databases: [JSONValue] = result.databases.enumerated().map { index, database in
            .object(JSONObject([
                ("file", .string(database.name)),
                ("skipped", .array(skippedRows(result, index).map { row in
                    .object(JSONObject([("url", .string(row.url)), ("kind", .string(row.isTile ? "tile" : "resource")),
                                        ("reason", .string(row.reason))]))
                })),
                ("regions", .array(database.regions.map { region in
                    .object(JSONObject([
                        ("sideRowID", .int(Int(region.sideRowID))), ("rowID", .int(Int(region.rowID))),
                        ("name", name(of: region).map { .string($0) } ?? .null),
                        ("action", .string(region.isNew ? "added" : "merged")),
                        ("tiles", counts(region.tiles)), ("resources", counts(region.resources)),
                    ]))
                })),
            ]))
        }
        return .object(JSONObject([
            ("schemaVersion", .int(schemaVersion)), ("kind", "merge-report"), ("store", .string(result.store)),
            ("lockUpdated", .bool(result.lock != nil)),
            ("totals", .object(JSONObject([
                ("tiles", .int(result.content.tileCount)), ("resources", .int(result.content.resourceCount)),
                ("bytes", .int(Int(result.content.byteCount))), ("contentDigest", .string("sha256:" + result.content.digest)),
            ]))),
            ("databases", .array(databases)),
        ]))
    }

    /// One line per region, the store's totals, and the warning about the next apply.
    static func text(_ result: SideLoadRun.Result) -> String {
        var lines: [String] = []
        let regionCount = result.databases.map(\.regions.count).reduce(0, +)
        lines.append("Merged \(plural(result.databases.count, "offline database")) (\(plural(regionCount, "region"))) "
                     + "into \(result.store):")
        for (index, database) in result.databases.enumerated() {
            lines.append("  \(database.name):")
            if database.regions.isEmpty { lines.append("    no regions (rows no region links to are not merged)") }
            for region in database.regions {
                let what = region.isNew ? "added as row \(region.rowID)" : "merged into row \(region.rowID)"
                lines.append("    region \(label(region)): \(what): \(summary(region.tiles, "tile")); "
                             + "\(summary(region.resources, "resource"))")
            }
            let skipped = skippedRows(result, index)
            if !skipped.isEmpty {
                lines.append("    skipped \(plural(skipped.count, "row")) whose bytes are not valid for their kind "
                             + "(the store keeps its own row, if any):")
                for row in skipped { lines.append("      \(row.url): \(row.reason)") }
            }
        }
        let content = result.content
        lines.append("The store holds \(plural(content.tileCount, "tile")), \(plural(content.resourceCount, "resource")), "
                     + "\(ByteFormat.string(content.byteCount)); "
                     + (result.lock == nil ? "it has no lock, and none was written." : "its lock's content fields were rewritten."))
        let added = result.databases.flatMap(\.regions).filter(\.isNew).map(label)
        lines.append("Warning: the next 'provision apply' of the job into \(result.store) removes the regions the job does "
                     + "not list" + (added.isEmpty ? "." : " (here: \(added.joined(separator: ", "))); add them to the job to keep them."))
        return lines.joined(separator: "\n") + "\n"
    }

    /// `N tiles added, R replaced, K kept` (and `, S skipped` when some were).
    private static func summary(_ counts: SideLoadCounts, _ noun: String) -> String {
        "\(plural(counts.added, noun)) added, \(grouped(counts.replaced)) replaced, \(grouped(counts.kept)) kept"
            + (counts.skipped > 0 ? ", \(grouped(counts.skipped)) skipped (not valid for their kind)" : "")
    }

    /// The rows skipped from the side database at `index`.
    private static func skippedRows(_ result: SideLoadRun.Result, _ index: Int) -> [SideLoadSkippedRow] {
        result.skipped.indices.contains(index) ? result.skipped[index] : []
    }

    /// The region's name (its description's `name`), else `row N`.
    static func label(_ region: SideLoadedRegion) -> String {
        name(of: region) ?? "row \(region.rowID)"
    }

    /// The `name` of the region's description, when the description is a JSON object with one.
    static func name(of region: SideLoadedRegion) -> String? {
        // A description that is not JSON has no name: the region is labelled `row N`.
        guard let description = region.description, let value = try? JSONValue.parse(description) else { return nil }
        return value["name"]?.stringValue
    }
}
