import Foundation
import ProvisionFoundation
import ProvisionTestSupport
import XCTest

/// The Valhalla test town as a routing pack's source for the store tests (audit, repair, export,
/// shards): its regions and a job over them.
enum RoutingTown {
    static let epoch = ["SOURCE_DATE_EPOCH": "1700000000"]
    static let graphBase = "https://graph.example.com/town/"
    /// The west column of the town (and one cell beyond it) and the south-east level-2 cell.
    static let west = Demo.City(id: "west", name: "West", bbox: [4.90, 50.03, 5.20, 50.47])
    static let east = Demo.City(id: "east", name: "East", bbox: [5.52, 50.03, 5.72, 50.22])
    /// The five tiles the pack of both regions holds, in the extract's order.
    static let tiles = ["0/003/196.gph", "1/050/585.gph", "2/000/807/140.gph", "2/000/807/142.gph", "2/000/808/580.gph"]

    /// A job over `cities` at z10 with the demo style whose regions all need the routing pack
    /// `drive`, whose tiles the job's origins take from `graph` (a directory or an HTTP base); the
    /// `mapped` cities are regions without the pack (the demo archive has tiles there, the town none).
    static func job(_ ws: Workspace, _ cities: [Demo.City], graph: JSONValue, name: String = "job.json",
                    mapped: [Demo.City] = []) throws -> String {
        let regions = cities.map { $0.region(zoom: 10...10, extra: [("routingPacks", ["drive"])]) }
            + mapped.map { $0.region(zoom: 10...10) }
        guard case .object(var job) = Demo.job(regions: regions, origins: ws.origins(tiles: .mbtiles) + [(graphBase, graph)]) else {
            throw CocoaError(.coderInvalidValue)
        }
        job["download"] = ["concurrency": 8, "retries": 1, "timeoutSeconds": 10, "missingTiles": "skip"]
        job["routingPacks"] = [["id": "drive", "tiles": .string(graphBase + "{tilePath}"), "attribution": "© the test town's mappers",
                                "licence": "ODbL-1.0"]]
        return try ws.write(.object(job), to: name).path
    }

    /// Serves the town's tile tree under `/graph/` of the workspace's server; returns its base URL.
    static func serve(_ ws: Workspace) throws -> String {
        ws.server.serveDirectory(try ValhallaFixture.town().tileDirectory, at: "/graph/")
        return ws.server.baseURL + "/graph/"
    }

    /// The offset in `tar` of the bytes of the member named `path` (just after its header).
    static func offset(of path: String, in tar: Data) throws -> Int {
        let header = try XCTUnwrap(tar.range(of: Data(path.utf8)), "\(path) in the tar")
        return header.lowerBound + 512
    }

    /// The size of each tile an extract's `index.bin` lists, by tile path: read from the bytes as
    /// Valhalla lays them out (a 512-byte ustar header whose size field is octal, then 16-byte
    /// entries: offset, graph id `level | index << 3`, size; little-endian).
    static func indexSizes(_ tar: Data) throws -> [String: Int] {
        let bytes = [UInt8](tar)
        let field = String(decoding: bytes[124..<136].prefix { $0 != 0 && $0 != 32 }, as: UTF8.self)
        let count = try XCTUnwrap(Int(field, radix: 8), "index.bin's size") / 16
        func number(_ at: Int, _ width: Int) -> Int { (0..<width).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        var sizes: [String: Int] = [:]
        for entry in 0..<count {
            let at = 512 + entry * 16, id = number(at + 8, 4)
            let level = id & 7, digits = level < 2 ? 6 : 9, index = String(id >> 3)
            let padded = String(repeating: "0", count: digits - index.count) + index
            let groups = stride(from: 0, to: digits, by: 3).map { String(padded.dropFirst($0).prefix(3)) }
            sizes["\(level)/" + groups.joined(separator: "/") + ".gph"] = number(at + 12, 4)
        }
        return sizes
    }

    /// The size of each tile a lock's record of a pack lists (`<path> <bytes> <sha256>`), by path.
    static func recordedSizes(_ record: JSONValue) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: (record["tiles"]?.arrayValue ?? []).compactMap { line in
            let parts = line.stringValue?.split(separator: " ") ?? []
            return parts.count == 3 ? Int(parts[1]).map { (String(parts[0]), $0) } : nil
        })
    }

    /// Per level 0, 1 and 2, the bytes of the tiles of `paths` on that level by `sizes`.
    static func bytesPerLevel(_ paths: [String], sizes: [String: Int]) -> [Int] {
        (0...2).map { level in paths.filter { $0.hasPrefix("\(level)/") }.reduce(0) { $0 + (sizes[$1] ?? -1_000_000) } }
    }

    /// `key` of each level of a planned pack (`addBytes`, `keepBytes` …), -1 for null.
    static func levelValues(_ pack: JSONValue, _ key: String) -> [Int] {
        (pack["levels"]?.arrayValue ?? []).map { $0[key]?.intValue ?? -1 }
    }
}
