import Foundation
import ProvisionFoundation

extension JobValidator {
    /// The `searchPacks` array, or nil after reporting. `stylePackIDs` and `tilesets` (every
    /// region's) are what a pack's `sources` may name.
    mutating func searchPacks(_ value: JSONValue, stylePackIDs: [String], tilesets: [String]) -> [SearchPack]? {
        guard let items = collector.array(value, at: "/searchPacks", expected: "an array of search packs") else { return nil }
        var result: [SearchPack] = []
        var seen: [String: String] = [:]
        for (i, item) in items.enumerated() {
            let pointer = JSONPointer.appending("/searchPacks", i)
            if let pack = searchPack(item, at: pointer, stylePackIDs: stylePackIDs, tilesets: tilesets, seen: &seen) {
                result.append(pack)
            }
        }
        return result.count == items.count ? result : nil
    }

    private mutating func searchPack(_ value: JSONValue, at pointer: String, stylePackIDs: [String], tilesets: [String],
                                     seen: inout [String: String]) -> SearchPack? {
        guard let object = collector.object(value, at: pointer, expected: "a search pack object") else { return nil }
        collector.checkKeys(object, at: pointer, allowed: JobFileKeys.searchPack, required: JobFileKeys.requiredSearchPack)
        let id = object["id"].flatMap { identifier($0, at: JSONPointer.appending(pointer, "id"), kind: "search pack",
                                                   seen: &seen) }
        let sourcesPointer = JSONPointer.appending(pointer, "sources")
        let sources = object["sources"].flatMap {
            self.nameList($0, at: sourcesPointer, what: "sources (style pack ids, <stylePack>/<source> or tileset URLs)")
        }.flatMap { searchSources($0, at: sourcesPointer, stylePackIDs: stylePackIDs, tilesets: tilesets) }
        var names: [String]? = SearchPack.defaultNames
        if let value = object["names"] {
            names = nameList(value, at: JSONPointer.appending(pointer, "names"), what: "name properties")
        }
        var layers: [String: SearchLayerMapping]??
        if let value = object["layers"] {
            layers = searchLayers(value, at: JSONPointer.appending(pointer, "layers")).map { $0 }
        } else {
            layers = .some(nil)
        }
        guard let id, let sources, let names, let layers else { return nil }
        return SearchPack(id: id, sources: sources, names: names, layers: layers)
    }

    /// A non-empty array of distinct non-empty strings, or nil after reporting.
    private mutating func nameList(_ value: JSONValue, at pointer: String, what: String) -> [String]? {
        guard let items = collector.array(value, at: pointer, expected: "a non-empty array of \(what)") else { return nil }
        if items.isEmpty {
            collector.report(pointer, "expected at least one entry, found an empty array")
            return nil
        }
        var result: [String] = []
        for (i, item) in items.enumerated() {
            let itemPointer = JSONPointer.appending(pointer, i)
            guard let text = collector.string(item, at: itemPointer, nonEmpty: true) else { continue }
            if result.contains(text) {
                collector.report(itemPointer, "expected each entry once, found \(DiagnosticCollector.quoted(text)) again")
                continue
            }
            result.append(text)
        }
        return result.count == items.count ? result : nil
    }

    /// Each source a style pack id, `<stylePack>/<source>` of a declared style pack, or a
    /// tileset URL of a region; nil after reporting the others.
    private mutating func searchSources(_ sources: [String], at pointer: String, stylePackIDs: [String],
                                        tilesets: [String]) -> [String]? {
        var ok = true
        for (i, text) in sources.enumerated() {
            if stylePackIDs.contains(text) || tilesets.contains(text) { continue }
            if let slash = text.firstIndex(of: "/"), !text.contains("://"),
               stylePackIDs.contains(String(text[..<slash])), text.index(after: slash) < text.endIndex { continue }
            let known = stylePackIDs + tilesets
            let suggestion = Suggestions.didYouMean(text, among: known)
            let hint = !suggestion.isEmpty ? suggestion
                : known.isEmpty ? "; the job declares no style packs or tilesets"
                : "; expected a style pack id, <stylePack>/<source> or a region's tileset: "
                    + known.map { "\"\($0)\"" }.joined(separator: ", ")
            collector.report(JSONPointer.appending(pointer, i), "unknown source \(DiagnosticCollector.quoted(text))\(hint)")
            ok = false
        }
        return ok ? sources : nil
    }

    /// A pack's `layers`: layer name → `{kind, class, subclass, rank}`, or nil after reporting.
    private mutating func searchLayers(_ value: JSONValue, at pointer: String) -> [String: SearchLayerMapping]? {
        guard let object = collector.object(value, at: pointer, expected: "an object mapping layer names to their kind")
        else { return nil }
        if object.members.isEmpty {
            collector.report(pointer, "expected at least one layer, found an empty object")
            return nil
        }
        var result: [String: SearchLayerMapping] = [:]
        var ok = true
        for (layer, entry) in object.members {
            let layerPointer = JSONPointer.appending(pointer, layer)
            guard let rule = searchLayer(entry, at: layerPointer) else { ok = false; continue }
            result[layer] = rule
        }
        return ok ? result : nil
    }

    private mutating func searchLayer(_ value: JSONValue, at pointer: String) -> SearchLayerMapping? {
        guard let object = collector.object(value, at: pointer, expected: "a layer rule object ({\"kind\": …})") else {
            return nil
        }
        collector.checkKeys(object, at: pointer, allowed: JobFileKeys.searchLayer, required: JobFileKeys.requiredSearchLayer)
        var kind: String?
        if let value = object["kind"] {
            let kindPointer = JSONPointer.appending(pointer, "kind")
            if let text = collector.string(value, at: kindPointer, expected: "a kind of place") {
                if SearchPack.kinds.contains(text) {
                    kind = text
                } else {
                    collector.report(kindPointer, "unknown kind \(DiagnosticCollector.quoted(text))"
                                     + Suggestions.didYouMean(text, among: SearchPack.kinds) + "; expected one of "
                                     + SearchPack.kinds.map { "\"\($0)\"" }.joined(separator: ", "))
                }
            }
        }
        let classKey = object["class"].map { collector.string($0, at: JSONPointer.appending(pointer, "class"), nonEmpty: true,
                                                              expected: "a property name") } ?? "class"
        let subclass = object["subclass"].map { collector.string($0, at: JSONPointer.appending(pointer, "subclass"),
                                                                 nonEmpty: true, expected: "a property name") }
        var rank: [String]? = []
        if let value = object["rank"] {
            let rankPointer = JSONPointer.appending(pointer, "rank")
            if let text = value.stringValue, !text.isEmpty {
                rank = [text]
            } else if value.arrayValue != nil {
                rank = nameList(value, at: rankPointer, what: "property names")
            } else {
                collector.report(rankPointer, "expected a property name or an array of them, found "
                                 + DiagnosticCollector.found(value))
                rank = nil
            }
        }
        guard let kind, let classKey, let rank else { return nil }
        if case .some(.none) = subclass { return nil }
        return SearchLayerMapping(kind: kind, classKey: classKey, subclassKey: subclass ?? nil, rankKeys: rank)
    }

    /// Each region's `searchPacks` checked against the declared ids.
    mutating func checkSearchPackReferences(_ root: JSONObject, searchPackIDs: [String]) {
        for (i, region) in (root["regions"]?.arrayValue ?? []).enumerated() {
            guard let value = region["searchPacks"] else { continue }
            let pointer = JSONPointer.appending(JSONPointer.appending("/regions", i), "searchPacks")
            guard let items = collector.array(value, at: pointer, expected: "an array of search pack ids") else { continue }
            var seen: [String] = []
            for (j, item) in items.enumerated() {
                let itemPointer = JSONPointer.appending(pointer, j)
                guard let text = collector.string(item, at: itemPointer, expected: "a search pack id") else { continue }
                if seen.contains(text) {
                    collector.report(itemPointer, "expected each entry once, found \(DiagnosticCollector.quoted(text)) again")
                } else if !searchPackIDs.contains(text) {
                    let suggestion = Suggestions.didYouMean(text, among: searchPackIDs)
                    let hint = !suggestion.isEmpty ? suggestion
                        : searchPackIDs.isEmpty ? "; the job declares no search packs"
                        : "; expected one of " + searchPackIDs.map { "\"\($0)\"" }.joined(separator: ", ")
                    collector.report(itemPointer, "unknown search pack \(DiagnosticCollector.quoted(text))\(hint)")
                }
                seen.append(text)
            }
        }
    }
}
