import Foundation
import ProvisionFoundation
import ProvisionCoverage
import ProvisionEngine
import ProvisionModel
import ProvisionReports
import ProvisionStore

extension CoverageArguments {
    /// The maps to draw: every zoom for `--html`, then the one zoom of `--svg`.
    var requests: [CoverageOptions] {
        (html == nil ? [] : [CoverageOptions(graphLevel: graphLevel)]) + (svg == nil ? [] : [CoverageOptions(zoom: zoom, graphLevel: graphLevel)])
    }

    /// Checks, before any work, that each picture's file can be written (73 when not).
    func checkWritable() throws(ProvisionError) {
        for (flag, path) in outputs { try checkWritableOutput(path, flag: flag) }
    }

    /// Renders and writes the pictures, each atomically, from `maps` (in `requests` order).
    func write(_ maps: [CoverageMap], progress: ProgressReporter) throws(ProvisionError) {
        var remaining = maps[...]
        if let html, let map = remaining.popFirst() {
            try Self.write(CoverageRenderer.html(map), to: html, flag: "--html", map: map, zooms: map.views, progress: progress)
        }
        if let svg, let zoom, let map = remaining.popFirst(), let text = CoverageRenderer.svg(map, zoom: zoom) {
            try Self.write(text, to: svg, flag: "--svg", map: map, zooms: map.views.filter { $0.zoom == zoom }, progress: progress)
        }
    }

    private static func write(_ text: String, to path: String, flag: String, map: CoverageMap, zooms: [CoverageView],
                              progress: ProgressReporter) throws(ProvisionError) {
        let data = Data(text.utf8)
        do {
            try AtomicFile.write(data, to: URL(fileURLWithPath: path))
        } catch {
            throw ProvisionError(.cannotWriteStore, "cannot write \(flag) \(path): \(describe(error))", cause: error)
        }
        let cells = zooms.reduce(0) { $0 + $1.cells.count }
        progress.emit(.coverageWritten(path: path, kind: map.kind.rawValue, format: flag == "--html" ? "html" : "svg",
                                       zooms: zooms.map(\.zoom), cells: cells, bytes: data.count))
    }
}
