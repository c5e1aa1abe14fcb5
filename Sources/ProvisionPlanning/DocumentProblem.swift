import Foundation
import ProvisionModel

/// A document handed to the planner (a style, a TileJSON) that cannot be used, with where it is wrong.
///
/// Planning errors are input problems: they say which document, the JSON pointer of the
/// offending value (`/sources/streets/tiles/0`) and what was expected, so that the CLI can turn
/// them into a `Diagnostic` without knowing how the document was read.
public struct DocumentProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// The canonical URL of the document the problem is in (the style URL, a TileJSON URL).
    public var document: String
    /// The JSON pointer of the offending value; empty for the whole document.
    public var pointer: String
    /// What is wrong: what was expected and what was found.
    public var message: String

    /// An error in `document` at `pointer`.
    public init(document: String, pointer: String, message: String) {
        self.document = document
        self.pointer = pointer
        self.message = message
    }

    /// `document: /pointer: message`.
    public var description: String {
        "\(document): \(pointer.isEmpty ? "/" : pointer): \(message)"
    }

    /// The same problem as a `Diagnostic` against `file`.
    public func diagnostic(file: String? = nil) -> Diagnostic {
        Diagnostic(file: file ?? document, pointer: pointer, message: message)
    }
}
