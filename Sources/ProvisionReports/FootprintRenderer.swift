import Foundation
import ProvisionFoundation
import ProvisionModel

/// Renders a footprint as one table, for the text views of plan, apply and audit and for the
/// plan's Markdown: a line per region (and per region row when a region has several style
/// packs), the regions together, and a line per style pack with its resources by kind.
public enum FootprintRenderer {
    /// The text table under `title`, e.g. `Bytes in offline.db`.
    public static func text(_ footprint: Footprint, title: String) -> String {
        let lines = self.lines(footprint)
        guard !lines.isEmpty else { return "" }
        let header = ["", "marginal", "shared", "total", "shared with / made of"]
        let cells = lines.map { [$0.label, bytes($0.marginal), bytes($0.shared), bytes($0.total), $0.detail] }
        let widths = (0..<4).map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
        func row(_ cells: [String]) -> String {
            var out = "  " + cells[0] + String(repeating: " ", count: widths[0] - cells[0].count)
            for column in 1...3 { out += "  " + String(repeating: " ", count: widths[column] - cells[column].count) + cells[column] }
            return (out + (cells[4].isEmpty ? "" : "  " + cells[4])) + "\n"
        }
        var out = "\(title) (\(legend(footprint))):\n"
        out += row(header)
        for line in cells { out += row(line) }
        return out
    }

    /// The Markdown table under a `####` heading `title`.
    public static func markdown(_ footprint: Footprint, title: String) -> String {
        let lines = self.lines(footprint, code: true)
        guard !lines.isEmpty else { return "" }
        var out = "#### \(title)\n\nBytes \(legend(footprint)).\n\n"
        out += "| | marginal | shared | total | shared with / made of |\n|---|--:|--:|--:|---|\n"
        for line in lines {
            let cells = [line.label, bytes(line.marginal), bytes(line.shared), bytes(line.total), line.detail]
            out += "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// What the columns mean, and what `~` marks when something is estimated.
    static func legend(_ footprint: Footprint) -> String {
        let base = "as stored, compressed where the row is; marginal: what removing it frees"
        return footprint.isExact ? base : base + "; ~: partly estimated, still to download"
    }

    /// One line of the table.
    struct Line {
        var label: String
        var marginal: ContentAmount
        var shared: ContentAmount
        var total: ContentAmount
        var detail: String
    }

    /// The lines: regions (with their rows when they have several), all regions, style packs.
    static func lines(_ footprint: Footprint, code: Bool = false) -> [Line] {
        func name(_ text: String) -> String { code ? "`\(text)`" : text }
        var out: [Line] = []
        for region in footprint.regions {
            out.append(Line(label: "region \(name(region.id))", marginal: region.entry.marginal, shared: region.entry.shared,
                            total: region.entry.total, detail: shares(region.entry)))
            guard region.rows.count > 1 else { continue }
            for row in region.rows {
                out.append(Line(label: "  \(name(row.key))", marginal: row.entry.marginal, shared: row.entry.shared,
                                total: row.entry.total, detail: shares(row.entry)))
            }
        }
        if footprint.regions.count > 1 {
            out.append(Line(label: "all regions", marginal: footprint.all.marginal, shared: footprint.all.shared,
                            total: footprint.all.total, detail: ""))
        }
        for pack in footprint.stylePacks {
            let kinds = pack.kinds.filter { !$0.amount.isZero }.map { "\(kindName($0.kind)) \(bytes($0.amount))" }
            out.append(Line(label: "style pack \(name(pack.id))", marginal: pack.entry.marginal, shared: pack.entry.shared,
                            total: pack.entry.total, detail: kinds.joined(separator: ", ")))
        }
        return out
    }

    /// `paris 1.2 MiB, london 3.0 KiB`: the first five shares, largest first, and how many more.
    static func shares(_ entry: Footprint.Entry) -> String {
        let shown = entry.sharedWith.prefix(5).map { "\($0.name) \(bytes($0.amount))" }
        let more = entry.sharedWith.count - shown.count
        return shown.joined(separator: ", ") + (more > 0 ? ", and \(more) more" : "")
    }

    /// `1.2 MiB`, or `~1.2 MiB` when part of it is estimated.
    static func bytes(_ amount: ContentAmount) -> String {
        (amount.isEstimated ? "~" : "") + ByteFormat.string(amount.bytes)
    }

    static func kindName(_ group: Footprint.ResourceGroup) -> String {
        switch group {
        case .style: return "style"
        case .sources: return "sources"
        case .sprites: return "sprites"
        case .glyphs: return "glyphs"
        case .other: return "other"
        }
    }
}
