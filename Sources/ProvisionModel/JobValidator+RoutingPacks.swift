import Foundation
import ProvisionFoundation

extension JobValidator {
    /// The `routingPacks` array, or nil after reporting.
    mutating func routingPacks(_ value: JSONValue) -> [RoutingPack]? {
        guard let items = collector.array(value, at: "/routingPacks", expected: "an array of routing packs") else { return nil }
        var result: [RoutingPack] = []
        var seen: [String: String] = [:]
        for (i, item) in items.enumerated() {
            if let pack = routingPack(item, at: JSONPointer.appending("/routingPacks", i), seen: &seen) { result.append(pack) }
        }
        return result.count == items.count ? result : nil
    }

    private mutating func routingPack(_ value: JSONValue, at pointer: String, seen: inout [String: String]) -> RoutingPack? {
        guard let object = collector.object(value, at: pointer, expected: "a routing pack object") else { return nil }
        collector.checkKeys(object, at: pointer, allowed: JobFileKeys.routingPack, required: JobFileKeys.requiredRoutingPack)
        let id = object["id"].flatMap { identifier($0, at: JSONPointer.appending(pointer, "id"), kind: "routing pack", seen: &seen) }
        let source = routingSource(object, at: pointer)
        var gzip: Bool? = false
        if let value = object["gzip"] {
            if case .bool(let flag) = value {
                gzip = flag
            } else {
                gzip = nil
                collector.report(JSONPointer.appending(pointer, "gzip"), "expected true or false, found \(DiagnosticCollector.found(value))")
            }
        }
        let levels = object["levels"].map { graphLevels($0, at: JSONPointer.appending(pointer, "levels")) } ?? RoutingPack.defaultLevels
        let attribution = object["attribution"].map {
            collector.string($0, at: JSONPointer.appending(pointer, "attribution"), nonEmpty: true)
        }
        let licence = object["licence"].map { collector.string($0, at: JSONPointer.appending(pointer, "licence"), nonEmpty: true) }
        guard let id, let source, let gzip, let levels else { return nil }
        if case .some(.none) = attribution { return nil }
        if case .some(.none) = licence { return nil }
        return RoutingPack(id: id, tiles: source.tiles, extract: source.extract, gzip: gzip, levels: levels,
                           attribution: attribution ?? nil, licence: licence ?? nil)
    }

    /// The one of `tiles` (a template) or `extract` (a local tile extract, or one over HTTP(S)) a pack has, or nil after reporting.
    private mutating func routingSource(_ object: JSONObject, at pointer: String) -> (tiles: String, extract: URL?)? {
        let present = JobFileKeys.routingSourceKeys.filter { object[$0] != nil }
        guard present.count == 1, let key = present.first, let value = object[key] else {
            let found = present.isEmpty ? "none" : "both"
            collector.report(pointer, "expected exactly one of \"tiles\" (a {tilePath} URL template) or \"extract\" "
                             + "(a tile extract file), found \(found)")
            return nil
        }
        let keyPointer = JSONPointer.appending(pointer, key)
        if key == "tiles" { return graphTileTemplate(value, at: keyPointer).map { ($0, nil) } }
        guard let path = collector.string(value, at: keyPointer, nonEmpty: true, expected: "the path of a tile extract (.tar)") else {
            return nil
        }
        if path.hasPrefix("http://") || path.hasPrefix("https://") {
            // Requested as written (no keys from the environment), so a ${NAME} would be a secret in the job file.
            guard !path.contains("${") else {
                collector.report(keyPointer, "expected a tile extract URL without ${NAME} references (it is requested as "
                                 + "written), found \(DiagnosticCollector.quoted(path))")
                return nil
            }
            guard checkURLText(path, at: keyPointer), let url = URL(string: path) else { return nil }
            return ("", url)
        }
        let url = resolve(path)
        return checkExists(url, directory: false, what: "tile extract", at: keyPointer, isOrigin: true) ? ("", url) : nil
    }

    /// An http(s) URL template with `{tilePath}` once, or nil after reporting.
    private mutating func graphTileTemplate(_ value: JSONValue, at pointer: String) -> String? {
        let what = "a graph tile URL template (http:// or https://, with {tilePath})"
        guard let text = collector.string(value, at: pointer, expected: what) else { return nil }
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
            collector.report(pointer, "expected \(what), found \(DiagnosticCollector.found(value))")
            return nil
        }
        guard checkURLText(text, at: pointer) else { return nil }
        let tokens = text.components(separatedBy: RoutingPack.pathToken).count - 1
        guard tokens == 1 else {
            collector.report(pointer, "expected {tilePath} exactly once (Valhalla's mjolnir.tile_url form, "
                             + "e.g. https://host/tiles/{tilePath}), found \(tokens == 0 ? "none" : "it \(tokens) times") "
                             + "in \(DiagnosticCollector.quoted(text))")
            return nil
        }
        return text
    }

    /// A non-empty array of distinct known levels, returned ascending; nil after reporting.
    private mutating func graphLevels(_ value: JSONValue, at pointer: String) -> [Int]? {
        let known = RoutingPack.knownLevels.map(String.init).joined(separator: ", ")
        guard let items = collector.array(value, at: pointer, expected: "a non-empty array of graph levels (\(known))") else {
            return nil
        }
        if items.isEmpty {
            collector.report(pointer, "expected at least one level, found an empty array")
            return nil
        }
        var levels: [Int] = []
        for (i, item) in items.enumerated() {
            let itemPointer = JSONPointer.appending(pointer, i)
            guard let level = item.intValue, RoutingPack.knownLevels.contains(level) else {
                collector.report(itemPointer, "unknown graph level \(DiagnosticCollector.found(item)); expected one of \(known) "
                                 + "(0 motorways and primary roads, 1 secondary and tertiary, 2 the rest, 3 transit)")
                continue
            }
            if levels.contains(level) {
                collector.report(itemPointer, "expected each level once, found \(level) again")
                continue
            }
            levels.append(level)
        }
        return levels.count == items.count ? levels.sorted() : nil
    }

    /// Each region's `routingPacks` checked against the declared ids (each at most once).
    mutating func checkRoutingPackReferences(_ root: JSONObject, routingPackIDs: [String]) {
        for (i, region) in (root["regions"]?.arrayValue ?? []).enumerated() {
            guard let value = region["routingPacks"] else { continue }
            let pointer = JSONPointer.appending(JSONPointer.appending("/regions", i), "routingPacks")
            guard let items = collector.array(value, at: pointer, expected: "an array of routing pack ids") else { continue }
            var named: [String] = []
            for (j, item) in items.enumerated() {
                let itemPointer = JSONPointer.appending(pointer, j)
                guard let id = collector.string(item, at: itemPointer, expected: "a routing pack id") else { continue }
                defer { named.append(id) }
                guard !named.contains(id) else {
                    collector.report(itemPointer, "expected each entry once, found \(DiagnosticCollector.quoted(id)) again")
                    continue
                }
                guard !routingPackIDs.contains(id) else { continue }
                let suggestion = Suggestions.didYouMean(id, among: routingPackIDs)
                let hint = !suggestion.isEmpty ? suggestion
                    : routingPackIDs.isEmpty ? "; the job declares no routing packs"
                    : "; expected one of " + routingPackIDs.map { "\"\($0)\"" }.joined(separator: ", ")
                collector.report(itemPointer, "unknown routing pack \(DiagnosticCollector.quoted(id))\(hint)")
            }
        }
    }
}
