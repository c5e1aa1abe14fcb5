import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

extension Workspace {
    /// Fails unless no secret is in any output, in `files`, in any file of `stores` (the
    /// workspace's store unless told), or in any stored URL, definition, description, ETag or
    /// body of their `offline.db` once inflated.
    func assertNoSecrets(_ secrets: [String], outputs: [(String, ProcessResult)], files: [URL], stores: [URL]? = nil,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(try SQLiteShell.canInflate(), "the sqlite3 shell must inflate rows (sqlar_uncompress)", file: file, line: line)
        var leaks: [String] = []
        for secret in secrets {
            for (command, result) in outputs {
                if result.stdout.contains(secret) { leaks.append("stdout of `provision \(command)`") }
                if result.stderr.contains(secret) { leaks.append("stderr of `provision \(command)`") }
            }
            var everything = files
            for store in stores ?? [store] {
                if let enumerator = FileManager.default.enumerator(at: store, includingPropertiesForKeys: nil) {
                    everything += enumerator.compactMap { $0 as? URL }
                }
            }
            for url in everything {
                guard let data = try? Data(contentsOf: url) else { continue }  // a directory
                if data.range(of: Data(secret.utf8)) != nil { leaks.append(url.lastPathComponent) }
            }
            for database in (stores ?? [store]).map({ $0.appendingPathComponent("offline.db") })
            where FileManager.default.fileExists(atPath: database.path) {
                let sqlite = SQLiteShell(database: database)
                let needle = "CAST('\(secret)' AS BLOB)"
                let data = SQLiteShell.inflatedData
                let checks = [
                    "resources": "instr(CAST(url AS BLOB), \(needle)) OR instr(CAST(\(data) AS BLOB), \(needle)) OR instr(CAST(ifnull(etag, '') AS BLOB), \(needle))",
                    "tiles": "instr(CAST(url_template AS BLOB), \(needle)) OR instr(CAST(\(data) AS BLOB), \(needle))",
                    "regions": "instr(CAST(definition AS BLOB), \(needle)) OR instr(CAST(ifnull(description, '') AS BLOB), \(needle))",
                ]
                for (table, condition) in checks.sorted(by: { $0.key < $1.key }) {
                    let count = try sqlite.int("SELECT count(*) FROM \(table) WHERE \(condition)")
                    if count != 0 { leaks.append("\(count) rows of \(table)") }
                }
            }
        }
        XCTAssertEqual(leaks, [], "secrets leaked", file: file, line: line)
    }

    /// The bodies a saved plan carries base64-encoded (documents, region descriptions), decoded
    /// into one file beside it, so the secret scan reads them as they would be stored.
    func decodedSavedPlan(_ url: URL) throws -> URL {
        let json = try JSONValue.parse(Data(contentsOf: url))
        var bytes = Data()
        for (_, document) in json["documents"]?.objectValue?.members ?? [] {
            bytes += document["data"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
        }
        for region in json["regions"]?.arrayValue ?? [] {
            bytes += region["description"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Data()
        }
        XCTAssertFalse(bytes.isEmpty, "the saved plan carries documents")
        let decoded = url.appendingPathExtension("decoded")
        try bytes.write(to: decoded)
        return decoded
    }
}
