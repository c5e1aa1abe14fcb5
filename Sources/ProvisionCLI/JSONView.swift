import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionExport
import ProvisionModel
import ProvisionReports

/// What programs read: each event one NDJSON line on stderr (`--progress json`, fields as
/// `Jobs/schema/events.schema.json` documents them, in that order), the versioned JSON documents
/// on stdout (`--format json`).
enum JSONView {
    /// The event's name and fields (`event` and `elapsed` come first, from `line`); `elapsed` is
    /// the seconds since the command started (the download rate).
    static func event(_ event: ProvisionEvent, elapsed: Double) -> (name: String, fields: JSONObject) {
        let (name, fields) = members(event, elapsed: elapsed)
        return (name, JSONObject(fields.map { ($0.key, $0.value) }))
    }

    /// An event's fields, in the schema's order.
    private typealias Fields = KeyValuePairs<String, JSONValue>

    private static func members(_ event: ProvisionEvent, elapsed: Double) -> (name: String, fields: Fields) {
        switch event {
        case .planStarted(let job, _, let store): return ("plan-started", ["job": .string(job), "store": .string(store)])
        case .planFinished(let hasChanges, let tilesToDownload, let seconds):
            return ("plan-finished", ["hasChanges": .bool(hasChanges), "tilesToDownload": .int(tilesToDownload),
                                      "seconds": .double((seconds * 1000).rounded() / 1000)])
        case .planLoaded(let path): return ("plan-loaded", ["path": .string(path)])
        case .planSaved(let path): return ("plan-saved", ["path": .string(path)])
        case .takingOver, .recovered: return phase("recover")
        case .checkingForDamage, .rebuilt, .checkingRows: return phase("repair")
        case .repaired(let rows, let unusable, _): return ("repair", ["rows": .int(rows), "unusable": .int(unusable)])
        case .phase(let name): return phase(name)
        case .downloads(let done, let total, let bytes, let failed):
            let rate = ProgressReporter.rate(done: done, elapsed: elapsed)
            return ("progress", ["done": .int(done), "total": .int(total), "bytes": .int(Int(bytes)), "failed": .int(failed),
                                 "rate": .double((rate * 10).rounded() / 10)])
        case .failure(let url, let reason): return failure(url: url, reason: reason)
        case .notMerged(let url, let database, let reason): return failure(url: url, reason: "not merged from \(database): \(reason)")
        case .region(let key, let tiles, let wanted, let complete):
            return ("region", ["key": .string(key), "tiles": .int(tiles), "wanted": .int(wanted), "complete": .bool(complete)])
        case .searchPack(let id, _, let built, let entries, let tiles, let bytes, let seconds):
            return ("search-pack", ["id": .string(id), "built": .bool(built), "entries": .int(entries), "bytes": .int(Int(bytes)),
                                    "tiles": .int(tiles), "seconds": .double(seconds)])
        case .routingPack(let id, _, let built, let tiles, let fetched, let absent, let bytes, let seconds):
            return ("routing-pack", ["id": .string(id), "built": .bool(built), "tiles": .int(tiles), "fetched": .int(fetched),
                                     "absent": .int(absent), "bytes": .int(Int(bytes)), "seconds": .double(seconds)])
        case .stopping(let signal): return ("stopping", ["signal": .int(Int(signal))])
        case .applyFinished(let status, let downloaded, let failed):
            return ("apply-finished", ["status": .string(status), "downloaded": .int(downloaded), "failed": .int(failed)])
        case .auditFinished(let whole, let ok, let regions, let tiles):
            return ("audit-finished", ["whole": .bool(whole), "ok": .bool(ok), "regions": .int(regions), "tiles": .int(tiles)])
        case .validateFinished(let checks):
            return ("validate-finished", ["valid": .bool(checks.allSatisfy(\.isValid)), "files": .array(checks.map(file))])
        case .coverageWritten(let path, _, let format, let zooms, let cells, let bytes):
            return ("coverage-written", ["path": .string(path), "format": .string(format), "zooms": .array(zooms.map { .int($0) }),
                                         "cells": .int(cells), "bytes": .int(bytes)])
        case .mergeStarted(let store, let shards, let tiles, _): return mergeStarted(store: store, shards: shards, tiles: tiles)
        case .sideLoadStarted(let store, let databases, let tiles): return mergeStarted(store: store, shards: databases, tiles: tiles)
        case .mergeFinished(let tiles, let resources, let bytes):
            return ("merge-finished", ["tiles": .int(tiles), "resources": .int(resources), "bytes": .int(Int(bytes))])
        case .exportStarted(let store, let format, let files, let tiles):
            return exportStarted(store: store, format: format, files: files, tiles: tiles)
        case .bundleStarted(let store, _, _, let files, let tiles):
            return exportStarted(store: store, format: "bundle", files: files, tiles: tiles)
        case .exportFile(let path, let source, let tiles, _, let bytes):
            return ("export-file", ["path": .string(path), "source": .string(source), "tiles": .int(tiles), "bytes": .int(Int(bytes))])
        case .exportFinished(let files, let tiles, let bytes):
            return ("export-finished", ["files": .int(files), "tiles": .int(tiles), "bytes": .int(Int(bytes))])
        case .partialExport(let reason): return ("warning", ["message": .string("the export is partial: " + reason)])
        case .lockSigned(let lock, let signature): return ("lock-signed", ["lock": .string(lock), "signature": .string(signature)])
        case .signatureRemoved(let lock, let signature):
            return ("signature-removed", ["lock": .string(lock), "signature": .string(signature)])
        case .signatureVerified(let lock, let signature):
            return ("signature-verified", ["lock": .string(lock), "signature": .string(signature)])
        }
    }

    /// The `error` event, the stream's last.
    static func error(_ error: ProvisionError) -> (name: String, fields: JSONObject) {
        ("error", JSONObject([("exitCode", .int(Int(error.exitCode.rawValue))), ("code", .string(error.exitCode.name)),
                              ("message", .string(error.message)), ("diagnostics", .array(error.diagnostics.map(diagnosticJSON)))]))
    }

    /// One NDJSON line: `event`, `elapsed` (to the millisecond), then the fields.
    static func line(_ name: String, _ fields: JSONObject, elapsed: Double) -> String {
        var object = JSONObject([("event", .string(name)), ("elapsed", .double((max(0, elapsed) * 1000).rounded() / 1000))])
        for (key, value) in fields.members { object[key] = value }
        return JSONValue.object(object).serialized(.compact) + "\n"
    }

    /// The validation document (`Jobs/schema/validation.schema.json`).
    static func validation(_ checks: [JobCheck]) -> JSONValue {
        ["schemaVersion": 1, "kind": "validation", "valid": .bool(checks.allSatisfy(\.isValid)), "files": .array(checks.map(file))]
    }

    private static func file(_ check: JobCheck) -> JSONValue {
        switch check.outcome {
        case .valid: return ["file": .string(check.path), "valid": true, "problems": []]
        case .invalid(let diagnostics):
            return ["file": .string(check.path), "valid": false, "problems": .array(diagnostics.map(diagnosticJSON))]
        case .unreadable(_, let reason): return ["file": .string(check.path), "valid": false, "unreadable": .string(reason), "problems": []]
        }
    }

    private static func phase(_ name: String) -> (name: String, fields: Fields) { ("phase", ["phase": .string(name)]) }

    private static func failure(url: String, reason: String) -> (name: String, fields: Fields) {
        ("failure", ["url": .string(url), "reason": .string(reason)])
    }

    private static func mergeStarted(store: String, shards: Int, tiles: Int) -> (name: String, fields: Fields) {
        ("merge-started", ["store": .string(store), "shards": .int(shards), "tiles": .int(tiles)])
    }

    private static func exportStarted(store: String, format: String, files: Int, tiles: Int) -> (name: String, fields: Fields) {
        ("export-started", ["store": .string(store), "format": .string(format), "files": .int(files), "tiles": .int(tiles)])
    }

    /// The results as the versioned JSON documents, pretty-printed with sorted keys.
    struct Results: ResultView {
        func plan(_ document: PlanDocument, coverage: () -> String?) -> String { Self.text(document.json) }
        func apply(_ report: ApplyReport) -> String { Self.text(report.json) }
        func audit(_ document: AuditDocument) -> String { Self.text(document.json) }
        func export(_ result: ExportResult) -> String { Self.text(result.json) }
        func merge(_ result: MergeRun.Result) -> String { Self.text(result.lock.json) }
        func sideLoad(_ result: SideLoadRun.Result) -> String { Self.text(result.json) }
        func search(_ report: SearchReport) -> String { Self.text(report.json) }
        func sign(_ result: SignResult) -> String { Self.text(result.json) }
        func validation(_ checks: [JobCheck]) -> Printed? { .result(Self.text(JSONView.validation(checks))) }
        func error(_ error: ProvisionError) -> String? { Self.text(error.json) }
        var reportOnStdout: String? { "on stdout" }
        func usageHint(command: String?) -> String? { nil }

        private static func text(_ document: JSONValue) -> String { document.serialized(.prettySorted) + "\n" }
    }
}
