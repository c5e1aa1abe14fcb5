import Foundation

/// The fields of a Valhalla graph tile's header (`baldr::GraphTileHeader`, little-endian) that say
/// which tile it is and which build made it.
///
/// Layout, in bytes: 0 a uint64 whose low 46 bits are the tile's graph id (the bits above are
/// quality flags); 8 the base corner as two float32 (lng, lat); 16 the version string, 16 bytes
/// NUL-padded; 32 the dataset id (uint64, from the OSM input); 224 the tile's end offset (uint32),
/// its whole size. The header is ``size`` (272) bytes.
public struct GraphTileHeader: Hashable, Sendable {
    /// The header's size in bytes: the smallest a tile can be.
    public static let size = 272
    /// Where the end offset (uint32) is.
    public static let endOffsetPosition = 224

    /// The graph id: the first word's low 46 bits.
    public var graphID: UInt64
    /// The base corner's longitude as stored.
    public var baseLng: Float
    /// The base corner's latitude as stored.
    public var baseLat: Float
    /// The version string without its NUL padding (`3.9.1`).
    public var version: String
    /// The dataset id, the same in every tile of one build.
    public var datasetID: UInt64
    /// The end offset: the tile's size in bytes as the header states it.
    public var endOffset: UInt32

    /// The build that wrote the tile: tiles work together only when this is equal.
    public var buildIdentity: GraphBuildIdentity { GraphBuildIdentity(datasetID: datasetID, version: version) }

    /// Reads and checks the header of `bytes`, the whole body fetched for `expected`.
    ///
    /// Checked, in order: the body holds a header; the graph id (low 46 bits) is `expected`'s; the
    /// base corner is the cell's south-west corner, or (0, 0) as Valhalla writes in a tile with no
    /// nodes; the version string is printable ASCII then NUL padding, not empty; the end offset
    /// equals the body's size. The dataset id is read, not judged (``GraphBuildIdentity`` compares it
    /// across tiles).
    public static func check(_ bytes: some DataProtocol & ContiguousBytes, expected: GraphTileID)
        throws(GraphTileHeaderError) -> GraphTileHeader {
        let count = bytes.count
        guard count >= size else { throw .tooShort(byteCount: count) }
        let header = bytes.withUnsafeBytes { raw in
            GraphTileHeader(
                graphID: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian & GraphTileID.headerIDMask,
                baseLng: Float(bitPattern: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian),
                baseLat: Float(bitPattern: raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian),
                version: "",
                datasetID: raw.loadUnaligned(fromByteOffset: 32, as: UInt64.self).littleEndian,
                endOffset: raw.loadUnaligned(fromByteOffset: endOffsetPosition, as: UInt32.self).littleEndian)
        }
        var checked = header
        guard header.graphID == expected.graphID else {
            throw .graphIDMismatch(expected: expected, found: header.graphID)
        }
        let corner = expected.baseCorner
        let isCellCorner = Double(header.baseLng) == corner.lng && Double(header.baseLat) == corner.lat
        let isZero = header.baseLng == 0 && header.baseLat == 0
        guard isCellCorner || isZero else {
            throw .baseCornerMismatch(expected: expected, lng: header.baseLng, lat: header.baseLat)
        }
        let versionBytes: [UInt8] = bytes.withUnsafeBytes { Array($0[16..<32]) }
        let textEnd = versionBytes.firstIndex(of: 0) ?? versionBytes.count
        let text = versionBytes[..<textEnd], padding = versionBytes[textEnd...]
        guard !text.isEmpty, text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), padding.allSatisfy({ $0 == 0 }) else {
            throw .versionNotText(bytes: versionBytes)
        }
        checked.version = String(decoding: text, as: UTF8.self)
        guard Int(header.endOffset) == count else {
            throw .sizeMismatch(endOffset: header.endOffset, byteCount: count)
        }
        return checked
    }
}

/// The build a tile came from: its dataset id and Valhalla version. Tiles of two builds cannot be
/// routed across (graph ids are not stable between builds), so a pack holds one identity.
public struct GraphBuildIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The dataset id of the header.
    public var datasetID: UInt64
    /// The version string of the header.
    public var version: String

    /// Creates an identity from its two fields.
    public init(datasetID: UInt64, version: String) {
        self.datasetID = datasetID
        self.version = version
    }

    /// `dataset 4242, Valhalla 3.9.1`.
    public var description: String { "dataset \(datasetID), Valhalla \(version)" }

    /// The one build `tiles` come from, or nil for no tiles; tiles of two builds throw
    /// ``MixedBuildsError`` naming the first tile of each.
    public static func single(_ tiles: some Sequence<(GraphTileID, GraphBuildIdentity)>) throws(MixedBuildsError)
        -> GraphBuildIdentity? {
        var first: (GraphTileID, GraphBuildIdentity)?
        for (tile, identity) in tiles {
            guard let (firstTile, firstIdentity) = first else {
                first = (tile, identity)
                continue
            }
            if identity != firstIdentity {
                throw MixedBuildsError(first: firstTile, firstBuild: firstIdentity, other: tile, otherBuild: identity)
            }
        }
        return first?.1
    }
}

/// Tiles of two builds in one pack: Valhalla cannot route across them (graph ids are not stable
/// between builds), so a pack is refused naming a tile of each.
public struct MixedBuildsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A tile of the first build seen.
    public var first: GraphTileID
    /// The first build.
    public var firstBuild: GraphBuildIdentity
    /// A tile of another build.
    public var other: GraphTileID
    /// The other build.
    public var otherBuild: GraphBuildIdentity

    /// Creates the error from a tile of each build.
    public init(first: GraphTileID, firstBuild: GraphBuildIdentity, other: GraphTileID, otherBuild: GraphBuildIdentity) {
        self.first = first
        self.firstBuild = firstBuild
        self.other = other
        self.otherBuild = otherBuild
    }

    /// One line naming both builds and a tile of each.
    public var description: String {
        "graph tiles of two builds: \(first.path) is \(firstBuild), \(other.path) is \(otherBuild)"
    }
}

/// Why a body is not the graph tile that was asked for.
public enum GraphTileHeaderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The body is shorter than a header.
    case tooShort(byteCount: Int)
    /// The header's graph id (low 46 bits) names another tile or object.
    case graphIDMismatch(expected: GraphTileID, found: UInt64)
    /// The base corner is neither the cell's south-west corner nor (0, 0).
    case baseCornerMismatch(expected: GraphTileID, lng: Float, lat: Float)
    /// The version string is not printable text followed by NUL padding.
    case versionNotText(bytes: [UInt8])
    /// The header's end offset differs from the body's size (a truncated or padded body).
    case sizeMismatch(endOffset: UInt32, byteCount: Int)

    /// One line naming what is wrong.
    public var description: String {
        switch self {
        case .tooShort(let count):
            return "graph tile is \(count) bytes, shorter than its \(GraphTileHeader.size)-byte header"
        case .graphIDMismatch(let expected, let found):
            let named = GraphTileID(graphID: found).map { "tile \($0)" } ?? "no tile of the hierarchy"
            return "graph tile header has graph id \(found) (\(named)\(found >> 25 != 0 ? ", object \(found >> 25)" : "")), "
                + "expected \(expected.graphID) (tile \(expected))"
        case .baseCornerMismatch(let expected, let lng, let lat):
            let corner = expected.baseCorner
            return "graph tile header has base corner (\(lng), \(lat)), expected (\(corner.lng), \(corner.lat)) of tile \(expected) or (0, 0)"
        case .versionNotText(let bytes):
            return "graph tile header's version is not NUL-padded text: " + bytes.map { String(format: "%02x", $0) }.joined()
        case .sizeMismatch(let endOffset, let count):
            return "graph tile header's end offset is \(endOffset) bytes, the body is \(count) bytes"
        }
    }
}
