/// One problem found in user input, with where it is and how to fix it.
public struct Diagnostic: Equatable, Sendable, CustomStringConvertible {
    /// The file the problem is in (as the user named it).
    public var file: String
    /// The JSON pointer of the offending value (`/regions/2/zoom`); empty for the whole document.
    public var pointer: String
    /// What is wrong: what was expected and what was found.
    public var message: String
    /// 1-based line, for syntax errors.
    public var line: Int?
    /// 1-based column (in Unicode scalars), for syntax errors.
    public var column: Int?
    /// Whether the problem is an origin the job names that does not exist (an `mbtiles:PATH` or
    /// `pmtiles:PATH` archive, a mirror directory): a job whose every problem is one is missing
    /// input (exit 66), as a missing job file is.
    public var isMissingFile = false

    public init(file: String, pointer: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.pointer = pointer
        self.message = message
        self.line = line
        self.column = column
    }

    /// `file:line:column: message`, `file:line:column: /pointer: message` (a duplicate key) or
    /// `file: /pointer: message`.
    public var description: String {
        if let line, let column {
            return "\(file):\(line):\(column): \(pointer.isEmpty ? "" : "\(pointer): ")\(message)"
        }
        return "\(file): \(pointer.isEmpty ? "/" : pointer): \(message)"
    }
}
