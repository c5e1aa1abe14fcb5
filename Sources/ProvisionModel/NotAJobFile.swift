import Foundation
import ProvisionFoundation

/// Recognises files given where a job file is expected that are something else: a provision
/// document (a saved plan, a plan or apply report, an audit, a lock file) or an SQLite database.
///
/// Why: validating such a file as a job lists dozens of unknown and missing keys (a saved plan
/// gave 46), none of which says what went wrong; one sentence naming what the file is does.
public enum NotAJobFile {
    /// The `kind` of every JSON document provision writes, and how to name it.
    public static let documentKinds: [String: String] = [
        "saved-plan": "a saved plan",
        "plan": "a provision plan document (plan --json)",
        "apply-report": "a provision apply report",
        "audit": "a provision audit document",
        "validation": "a provision validation document",
        "error": "a provision error document",
    ]

    /// What `document` is when it is a provision document rather than a job (`a saved plan`,
    /// `a provision lock file`), or nil.
    ///
    /// A document counts when it has a `kind` provision writes, or a string `kind` and a
    /// `schemaVersion` (a kind of a later version), or the members of a lock file
    /// (`schemaVersion`, `job`, `epoch`) and no job `version`. A job with a stray `kind` key is
    /// left to the validator, which reports the unknown key.
    public static func describe(_ document: JSONValue) -> String? {
        guard let object = document.objectValue, object["version"] == nil else { return nil }
        if let kind = object["kind"]?.stringValue {
            if let name = documentKinds[kind] { return name }
            if object["schemaVersion"] != nil { return "a provision \"\(kind)\" document" }
            return nil
        }
        if object["schemaVersion"] != nil, object["job"]?.objectValue != nil, object["epoch"] != nil {
            return "a provision lock file"
        }
        return nil
    }

    /// What `data` is when its first bytes say it is not JSON text at all, or nil.
    public static func describeBytes(_ data: Data) -> String? {
        if data.starts(with: Array("SQLite format 3\0".utf8)) { return "an SQLite database (an offline.db?)" }
        if data.starts(with: [0x1F, 0x8B]) { return "gzip-compressed data" }
        return nil
    }
}
