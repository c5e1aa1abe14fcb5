import Foundation
import ProvisionFoundation
import TileMath

/// Turns a parsed job document into a `Job`, collecting every problem as a `Diagnostic`.
///
/// Each member is checked on its own and a problem never stops the walk, so one run reports
/// every mistake in the file. A `Job` is only produced when nothing was reported.
struct JobValidator {
    /// The problems found so far.
    var collector: DiagnosticCollector
    /// The directory relative paths are resolved against (the job file's directory).
    let baseDirectory: URL
    /// The job file's name as the user gave it; GeoJSON file names are shown relative to it.
    let displayName: String
    let fileManager = FileManager.default

    init(baseDirectory: URL, displayName: String) {
        self.collector = DiagnosticCollector(file: displayName)
        self.baseDirectory = baseDirectory
        self.displayName = displayName
    }

    /// The job, or nil when any problem was reported.
    mutating func validate(_ root: JSONValue) -> Job? {
        guard let object = collector.object(root, at: "", expected: "a JSON object at the top level") else {
            return nil
        }
        collector.checkKeys(object, at: "", allowed: JobFileKeys.job, required: JobFileKeys.requiredJob)

        if let value = object["$schema"], value.stringValue == nil {
            collector.report("/$schema", "expected a string (the URL or path of the job file schema), "
                             + "found \(DiagnosticCollector.found(value))")
        }
        if let value = object["version"], value.intValue != 1 {
            collector.report("/version",
                             "expected 1 (the only job file version), found \(DiagnosticCollector.found(value))")
        }
        let name = object["name"].flatMap { collector.string($0, at: "/name", nonEmpty: true) }
        let store = object["store"].flatMap { value -> URL? in
            collector.string(value, at: "/store", nonEmpty: true, expected: "a directory path").map(resolve)
        }
        let stylePacks = object["stylePacks"].flatMap { self.stylePacks($0) } ?? []
        let packIDs = Self.declaredIDs(object["stylePacks"])
        let regions = object["regions"].flatMap { self.regions($0, stylePackIDs: packIDs) }
        let origins = object["origins"].flatMap { self.origins($0) } ?? []
        let limits = object["limits"].flatMap { self.limits($0, at: "/limits", job: true) } ?? Limits()
        let download = object["download"].flatMap { self.download($0) } ?? DownloadSettings()
        let tilesets = (object["regions"]?.arrayValue ?? []).flatMap { $0["tilesets"]?.arrayValue ?? [] }.compactMap(\.stringValue)
        let searchPacks = object["searchPacks"].flatMap {
            self.searchPacks($0, stylePackIDs: packIDs, tilesets: tilesets)
        } ?? []
        checkSearchPackReferences(object, searchPackIDs: Self.declaredIDs(object["searchPacks"]))
        let attribution = object["attribution"].map { self.attribution($0, name: name ?? "") }
        let routingPacks = object["routingPacks"].flatMap { self.routingPacks($0) } ?? []
        checkRoutingPackReferences(object, routingPackIDs: Self.declaredIDs(object["routingPacks"]))

        guard collector.diagnostics.isEmpty, var regions, let name else { return nil }
        // Checked above (`checkSearchPackReferences`): a region's search pack ids as written.
        for (i, item) in (object["regions"]?.arrayValue ?? []).enumerated() where regions.indices.contains(i) {
            regions[i].searchPacks = item["searchPacks"]?.arrayValue?.compactMap(\.stringValue) ?? []
            regions[i].routingPacks = item["routingPacks"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        var job = Job(version: 1, name: name, store: store, stylePacks: stylePacks, regions: regions,
                      origins: origins, limits: limits, download: download, searchPacks: searchPacks)
        job.attribution = attribution ?? nil
        job.routingPacks = routingPacks
        return job
    }

    /// The string ids of a `stylePacks` array, valid or not, so that references to a style pack
    /// with some other problem are not reported as unknown as well.
    static func declaredIDs(_ value: JSONValue?) -> [String] {
        guard let items = value?.arrayValue else { return [] }
        return items.compactMap { $0["id"]?.stringValue }
    }

    // MARK: - Style packs

    private mutating func stylePacks(_ value: JSONValue) -> [StylePack]? {
        guard let items = collector.array(value, at: "/stylePacks", expected: "an array of style packs") else {
            return nil
        }
        var result: [StylePack] = []
        var seen: [String: String] = [:]
        for (i, item) in items.enumerated() {
            let pointer = JSONPointer.appending("/stylePacks", i)
            if let pack = stylePack(item, at: pointer, seen: &seen) { result.append(pack) }
        }
        return result.count == items.count ? result : nil
    }

    private mutating func stylePack(_ value: JSONValue, at pointer: String,
                                    seen: inout [String: String]) -> StylePack? {
        guard let object = collector.object(value, at: pointer, expected: "a style pack object") else { return nil }
        collector.checkKeys(object, at: pointer, allowed: JobFileKeys.stylePack,
                            required: JobFileKeys.requiredStylePack)
        let id = object["id"].flatMap { identifier($0, at: JSONPointer.appending(pointer, "id"), kind: "style pack",
                                                   seen: &seen) }
        let style = object["style"].flatMap {
            remoteURL($0, at: JSONPointer.appending(pointer, "style"), what: "a style URL")
        }
        var pixelRatio: Int? = 1
        if let value = object["pixelRatio"] {
            pixelRatio = value.intValue.flatMap { (1...3).contains($0) ? $0 : nil }
            if pixelRatio == nil {
                collector.report(JSONPointer.appending(pointer, "pixelRatio"),
                                 "expected 1, 2 or 3, found \(DiagnosticCollector.found(value))")
            }
        }
        var glyphs: GlyphPolicy? = .ideographsLocal
        if let value = object["glyphs"] {
            glyphs = value.stringValue.flatMap(GlyphPolicy.init(rawValue:))
            if glyphs == nil {
                let names = GlyphPolicy.allCases.map(\.rawValue)
                let suggestion = value.stringValue.map { Suggestions.didYouMean($0, among: names) } ?? ""
                collector.report(JSONPointer.appending(pointer, "glyphs"),
                                 "expected \"all\", \"ideographs-local\" or \"used\", found \(DiagnosticCollector.found(value))"
                                 + suggestion)
            }
        }
        var overzoom: Bool? = true
        if let value = object["overzoom"] {
            if case .bool(let flag) = value {
                overzoom = flag
            } else {
                overzoom = nil
                collector.report(JSONPointer.appending(pointer, "overzoom"),
                                 "expected true or false, found \(DiagnosticCollector.found(value))")
            }
        }
        let metadata = metadataObject(object["metadata"], at: JSONPointer.appending(pointer, "metadata"))
        guard let id, let style, let pixelRatio, let glyphs, let overzoom, let metadata else { return nil }
        return StylePack(id: id, style: style, pixelRatio: pixelRatio, glyphs: glyphs, metadata: metadata,
                         overzoom: overzoom)
    }

    // MARK: - Origins, limits (download: JobValidator+Download.swift)

    private mutating func origins(_ value: JSONValue) -> [Origin]? {
        guard let object = collector.object(value, at: "/origins",
                                            expected: "an object mapping URL prefixes to mirrors") else { return nil }
        var result: [Origin] = []
        var ok = true
        for (prefix, mirrorValue) in object.members {
            // The key is named with its password hidden: a diagnostic never quotes a secret.
            let pointer = JSONPointer.appending("/origins", URLSecrets().redact(prefix))
            if !URLText.hasRemoteScheme(prefix, allowingSchemeOnly: true) {
                collector.report(pointer, "expected an http://, https:// or mapbox:// URL prefix as the key, "
                                 + "found \(DiagnosticCollector.quoted(prefix))")
                ok = false
            }
            guard let mirrorText = collector.string(mirrorValue, at: pointer, nonEmpty: true,
                                                    expected: "a mirror (a directory, mbtiles:PATH, pmtiles:PATH, pmtiles:URL or an http(s) URL)")
            else {
                ok = false
                continue
            }
            if let mirror = mirror(mirrorText, at: pointer) {
                result.append(Origin(prefix: prefix, mirror: mirror))
            } else {
                ok = false
            }
        }
        return ok ? result : nil
    }

    private mutating func mirror(_ text: String, at pointer: String) -> Mirror? {
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            return checkURLText(text, at: pointer) ? .http(text) : nil
        }
        if text.hasPrefix("mbtiles:") {
            guard let url = archiveFile(text, scheme: "mbtiles", what: "MBTiles file", at: pointer) else { return nil }
            return .mbtiles(url)
        }
        if text.hasPrefix("pmtiles:") {
            let rest = String(text.dropFirst("pmtiles:".count))
            if rest.hasPrefix("http://") || rest.hasPrefix("https://") {
                return remoteArchive(rest, text: text, at: pointer).map(Mirror.remotePMTiles)
            }
            guard let url = archiveFile(text, scheme: "pmtiles", what: "PMTiles file", at: pointer) else { return nil }
            return .pmtiles(url)
        }
        let url = resolve(text)
        guard checkExists(url, directory: true, what: "mirror directory", at: pointer, isOrigin: true) else { return nil }
        return .directory(url)
    }

    /// The file of an `mbtiles:PATH` or `pmtiles:PATH` mirror, resolved and checked to exist.
    private mutating func archiveFile(_ text: String, scheme: String, what: String, at pointer: String) -> URL? {
        let path = String(text.dropFirst(scheme.count + 1))
        guard !path.isEmpty else {
            let urls = scheme == "pmtiles" ? ", pmtiles:http://… or pmtiles:https://…" : ""
            collector.report(pointer, "expected \(scheme):PATH with a file path\(urls), found \(DiagnosticCollector.quoted(text))")
            return nil
        }
        let url = resolve(path)
        return checkExists(url, directory: false, what: what, at: pointer, isOrigin: true) ? url : nil
    }

    /// The URL of a `pmtiles:http(s)://…` mirror: a host after the scheme, no spaces, and no
    /// `${NAME}` reference (an archive URL is requested exactly as written, so a key in it would
    /// be a secret in the job file).
    private mutating func remoteArchive(_ url: String, text: String, at pointer: String) -> String? {
        let scheme = url.hasPrefix("https://") ? "https://" : "http://"
        let host = url.dropFirst(scheme.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty else {
            collector.report(pointer, "expected pmtiles:\(scheme)HOST/PATH with a host, found \(DiagnosticCollector.quoted(text))")
            return nil
        }
        guard !url.contains("${") else {
            collector.report(pointer, "expected a PMTiles archive URL without ${NAME} references (it is requested as "
                             + "written), found \(DiagnosticCollector.quoted(text))")
            return nil
        }
        return checkURLText(url, at: pointer) ? url : nil
    }

    mutating func limits(_ value: JSONValue, at pointer: String, job: Bool = false) -> Limits? {
        guard let object = collector.object(value, at: pointer) else { return nil }
        if !job, object["mapboxTiles"] != nil {
            collector.report(pointer + "/mapboxTiles", "expected mapboxTiles in the job's top-level limits only: "
                             + "devices count the mapbox:// tiles of the whole bundle")
            return nil
        }
        if !job, object["requireAttribution"] != nil {
            collector.report(pointer + "/requireAttribution", "expected requireAttribution in the job's top-level limits only: "
                             + "it applies to every source of the store")
            return nil
        }
        collector.checkKeys(object, at: pointer, allowed: job ? JobFileKeys.jobLimits : JobFileKeys.limits, required: [])
        var limits = Limits()
        var ok = true
        if let value = object["maxTiles"] {
            limits.maxTiles = collector.positiveInteger(value, at: pointer + "/maxTiles")
            ok = ok && limits.maxTiles != nil
        }
        if let value = object["maxBytes"] {
            limits.maxBytes = collector.positiveInteger(value, at: pointer + "/maxBytes").map(Int64.init)
            ok = ok && limits.maxBytes != nil
        }
        if job, let value = object["mapboxTiles"] {
            limits.mapboxTiles = collector.positiveInteger(value, at: pointer + "/mapboxTiles")
            ok = ok && limits.mapboxTiles != nil
        }
        if job, let value = object["requireAttribution"] {
            let flag = requireAttribution(value, at: pointer + "/requireAttribution")
            limits.requireAttribution = flag ?? false
            ok = ok && flag != nil
        }
        return ok ? limits : nil
    }

    // MARK: - Shared checks

    /// A safe id (`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) not seen before, or nil after reporting.
    mutating func identifier(_ value: JSONValue, at pointer: String, kind: String,
                             seen: inout [String: String]) -> String? {
        guard let id = collector.string(value, at: pointer, expected: "a \(kind) id string") else { return nil }
        guard Self.isSafeIdentifier(id) else {
            collector.report(pointer, "expected an id of 1 to 64 letters, digits, '.', '_' or '-' starting with a "
                             + "letter or digit, found \(DiagnosticCollector.found(value))")
            return nil
        }
        if let first = seen[id] {
            collector.report(pointer, "duplicate \(kind) id \"\(id)\"; it is first used at \(first)")
            return nil
        }
        seen[id] = pointer
        return id
    }

    /// Whether `id` matches `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`, so it is safe as a file or key name.
    static func isSafeIdentifier(_ id: String) -> Bool {
        let scalars = Array(id.unicodeScalars)
        guard (1...64).contains(scalars.count) else { return false }
        func isAlphanumeric(_ s: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s)
        }
        return scalars.enumerated().allSatisfy { n, s in
            isAlphanumeric(s) || (n > 0 && (s == "." || s == "_" || s == "-"))
        }
    }

    /// An http(s):// or mapbox:// URL string, or nil after reporting.
    mutating func remoteURL(_ value: JSONValue, at pointer: String, what: String) -> String? {
        let expected = "\(what) (an http://, https:// or mapbox:// URL)"
        guard let text = collector.string(value, at: pointer, expected: expected) else { return nil }
        guard URLText.hasRemoteScheme(text) else {
            collector.report(pointer, "expected \(what) starting with http://, https:// or mapbox://, "
                             + "found \(DiagnosticCollector.found(value))")
            return nil
        }
        guard checkURLText(text, at: pointer) else { return nil }
        let references = text.components(separatedBy: "${").count - 1
        if references > URLSecrets.variables(in: text).count {
            collector.report(pointer, "expected ${NAME} references only as whole query parameter values (?key=${NAME}), "
                             + "so that the URL stored for devices holds no secret, found "
                             + DiagnosticCollector.quoted(text))
            return nil
        }
        return text
    }

    /// Checks a URL for whitespace and malformed `${VAR}` references; reports and returns false.
    mutating func checkURLText(_ text: String, at pointer: String) -> Bool {
        if let problem = URLText.problem(in: text) {
            collector.report(pointer, "\(problem), found \(DiagnosticCollector.quoted(text))")
            return false
        }
        return true
    }

    /// A metadata object (default empty), or nil after reporting.
    mutating func metadataObject(_ value: JSONValue?, at pointer: String) -> JSONObject? {
        guard let value else { return JSONObject() }
        return collector.object(value, at: pointer)
    }

    /// `path` resolved against the job file's directory (absolute paths are kept), standardized.
    func resolve(_ path: String) -> URL {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL }
        return URL(fileURLWithPath: baseDirectory.appendingPathComponent(path).path).standardizedFileURL
    }

    /// Whether a file (or directory) exists at `url`; reports `<what> not found: <path>` when not.
    mutating func checkExists(_ url: URL, directory: Bool, what: String, at pointer: String, isOrigin: Bool = false) -> Bool {
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            if isOrigin {
                collector.reportMissingFile(pointer, "\(what) not found: \(url.path)")
            } else {
                collector.report(pointer, "\(what) not found: \(url.path)")
            }
            return false
        }
        if isDirectory.boolValue != directory {
            collector.report(pointer, "expected a \(what), found a \(directory ? "file" : "directory"): \(url.path)")
            return false
        }
        return true
    }
}
