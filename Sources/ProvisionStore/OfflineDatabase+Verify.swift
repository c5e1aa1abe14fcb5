import Foundation
import ProvisionModel

extension OfflineDatabase {
    /// One stored row handed to `forEachPayload`.
    public struct StoredPayload {
        /// The resource URL, or the tile's template with `z/x/y`.
        public var name: String
        public var kind: ResourceKind
        /// The inflated payload, or why it could not be inflated.
        public var payload: Result<Data, StoreError>
        /// Expiry (Unix seconds), if the row has one.
        public var expires: Int64?
    }

    /// Calls `body` with every resource and tile row, inflating compressed payloads; for audits.
    public func forEachPayload(_ body: (StoredPayload) throws -> Void) throws {
        let resources = try db.prepare("SELECT url, kind, data, compressed, expires FROM resources ORDER BY url")
        defer { resources.reset() }
        while try resources.step() {
            try body(StoredPayload(name: resources.text(0), kind: ResourceKind(rawValue: Int(resources.int64(1))) ?? .unknown,
                                   payload: inflated(resources, 2, 3), expires: resources.optionalInt64(4)))
        }
        let tiles = try db.prepare(
            "SELECT url_template, z, x, y, data, compressed, expires FROM tiles ORDER BY url_template, pixel_ratio, z, x, y")
        defer { tiles.reset() }
        while try tiles.step() {
            try body(StoredPayload(name: "\(tiles.text(0)) \(tiles.int64(1))/\(tiles.int64(2))/\(tiles.int64(3))", kind: .tile,
                                   payload: inflated(tiles, 4, 5), expires: tiles.optionalInt64(6)))
        }
    }

    private func inflated(_ statement: SQLiteStatement, _ dataColumn: Int32, _ compressedColumn: Int32) -> Result<Data, StoreError> {
        let stored = statement.optionalData(dataColumn) ?? Data()
        guard statement.int64(compressedColumn) != 0 else { return .success(stored) }
        do {
            return .success(try RowCompression.inflate(stored))
        } catch {
            return .failure(error)
        }
    }
}
