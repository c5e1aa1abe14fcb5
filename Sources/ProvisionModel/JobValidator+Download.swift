import Foundation
import ProvisionFoundation

extension JobValidator {
    /// The largest `download.maxResponseBytes` accepted: bodies are held in memory while verified.
    static let maxResponseBytesRange = 1024...(1 << 30)

    /// The `download` object, or nil after reporting.
    mutating func download(_ value: JSONValue) -> DownloadSettings? {
        guard let object = collector.object(value, at: "/download") else { return nil }
        collector.checkKeys(object, at: "/download", allowed: JobFileKeys.download, required: [])
        var settings = DownloadSettings()
        var ok = true
        func integer(_ key: String, in range: ClosedRange<Int>, _ apply: (inout DownloadSettings, Int) -> Void) {
            guard let value = object[key] else { return }
            if let n = collector.integer(value, at: "/download/\(key)", in: range) {
                apply(&settings, n)
            } else {
                ok = false
            }
        }
        func seconds(_ key: String, what: String, _ apply: (inout DownloadSettings, Double) -> Void) {
            guard let value = object[key] else { return }
            if let number = value.doubleValue, number.isFinite, number > 0 {
                apply(&settings, number)
            } else {
                collector.report("/download/\(key)", "expected \(what) greater than 0, "
                                 + "found \(DiagnosticCollector.found(value))")
                ok = false
            }
        }
        integer("concurrency", in: 1...256) { $0.concurrency = $1 }
        integer("retries", in: 0...20) { $0.retries = $1 }
        seconds("timeoutSeconds", what: "a number of seconds") { $0.timeoutSeconds = $1 }
        integer("perHost", in: 1...256) { $0.perHost = $1 }
        if object["perHost"] == nil { settings.perHost = settings.concurrency }
        seconds("requestsPerSecond", what: "a number of requests per second") { $0.requestsPerSecond = $1 }
        integer("maxResponseBytes", in: Self.maxResponseBytesRange) { $0.maxResponseBytes = $1 }
        seconds("stallSeconds", what: "a number of seconds") { $0.stallSeconds = $1 }
        if let value = object["missingTiles"] {
            if let policy = value.stringValue.flatMap(MissingTilePolicy.init(rawValue:)) {
                settings.missingTiles = policy
            } else {
                let names = MissingTilePolicy.allCases.map(\.rawValue)
                let suggestion = value.stringValue.map { Suggestions.didYouMean($0, among: names) } ?? ""
                collector.report("/download/missingTiles", "expected \"fail\" or \"skip\", "
                                 + "found \(DiagnosticCollector.found(value))" + suggestion)
                ok = false
            }
        }
        if let value = object["userAgent"] {
            if let text = collector.string(value, at: "/download/userAgent", nonEmpty: true) {
                if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
                    collector.report("/download/userAgent",
                                     "expected a User-Agent without control characters or line breaks, "
                                     + "found \(DiagnosticCollector.found(value))")
                    ok = false
                } else {
                    settings.userAgent = text
                }
            } else {
                ok = false
            }
        }
        return ok ? settings : nil
    }
}
