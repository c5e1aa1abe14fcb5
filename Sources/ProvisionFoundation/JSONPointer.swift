/// A JSON Pointer (RFC 6901): the one encoder of the pointers diagnostics, parse errors and
/// plan errors name (`/regions/0/geojson`, `/origins/https:~1~1a.example~1`).
///
/// Each reference token is escaped as the RFC says, `~` to `~0` first and then `/` to `~1`, so a
/// key holding `~1` reads back as written; an empty key is the empty token (`/a//b`), and any
/// other character, Unicode included, is kept as it is.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    /// The pointer's text, tokens escaped: empty for the whole document.
    public private(set) var description: String

    /// The pointer to the whole document.
    public static let root = JSONPointer(escaped: "")

    /// A pointer from its already escaped text (`/sources/a~1b`).
    public init(escaped text: String) { description = text }

    /// A pointer from its already escaped text (`/sources/a~1b`).
    public static func parse(_ text: String) -> JSONPointer { JSONPointer(escaped: text) }

    /// The pointer to member `key` of the value this points to.
    public func appending(_ key: String) -> JSONPointer {
        JSONPointer(escaped: Self.appending(description, key))
    }

    /// The pointer to element `index` of the array this points to.
    public func appending(_ index: Int) -> JSONPointer {
        JSONPointer(escaped: Self.appending(description, index))
    }

    /// The reference tokens, unescaped (`~1` to `/`, then `~0` to `~`).
    public var tokens: [String] {
        guard !description.isEmpty else { return [] }
        return description.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    /// `token` escaped for a pointer: `~` to `~0`, then `/` to `~1`.
    public static func escape(_ token: String) -> String {
        guard token.contains("~") || token.contains("/") else { return token }
        return token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    /// The text of pointer `base` (escaped) followed by member `key`.
    public static func appending(_ base: String, _ key: String) -> String {
        base + "/" + escape(key)
    }

    /// The text of pointer `base` (escaped) followed by array element `index`.
    public static func appending(_ base: String, _ index: Int) -> String {
        base + "/" + String(index)
    }
}
