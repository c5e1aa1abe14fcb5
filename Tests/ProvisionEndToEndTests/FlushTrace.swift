import Foundation
import ProvisionTestSupport
import XCTest

/// Runs `provision` under Debian's `strace` and tells which files and directories of a directory
/// it wrote were not flushed (`fsync`) before that directory was renamed into place: what a power
/// loss right after the export could leave empty, torn or missing.
///
/// How: the trace lists every `openat`, `fsync`, `fdatasync` and rename of the process's main
/// thread (every write of an export happens there). A flushed file descriptor names the path it
/// was opened at; renames carry those names along (a file written under a temporary name and
/// renamed, a staging directory renamed to its destination). At the rename that puts `directory`
/// in place, every file and directory under it, and the directory itself, must be among them.
struct FlushTrace {
    /// The trace, one system call a line.
    var lines: [String]

    /// `provision arguments…` run in `ws` under strace; the trace is kept for `unflushed(in:)`.
    static func run(_ ws: Workspace, _ arguments: [String]) throws
        -> (result: ProcessResult, trace: FlushTrace) {
        guard let strace = ["/usr/bin/strace", "/bin/strace"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw MissingTool("strace", package: "strace") }
        let log = ws.root.appendingPathComponent("strace-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }  // best effort: a scratch file of the test
        let traced = ["-o", log.path, "-qq", "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2",
                      try ProvisionProcess.binary().path] + arguments
        let result = try ProvisionProcess.run(URL(fileURLWithPath: strace), traced, in: ws.root,
                                              environment: ProvisionProcess.environment([:]), timeout: 120)
        let text = try String(contentsOf: log, encoding: .utf8)
        return (result, FlushTrace(lines: text.split(separator: "\n").map(String.init)))
    }

    /// The paths under `directory` (relative; "." for the directory itself) that were not flushed
    /// under their final name before `directory` was renamed into place; every path when it never was.
    func unflushed(in directory: URL) -> [String] {
        let target = directory.standardizedFileURL.path
        var open: [Int: String] = [:]
        var flushed: Set<String> = []
        var placed: Set<String>?
        for line in lines {
            if let (path, descriptor) = Self.opened(line) {
                open[descriptor] = path
            } else if let descriptor = Self.flushedDescriptor(line), let path = open[descriptor] {
                flushed.insert(path)
            } else if let (from, to) = Self.renamed(line) {
                flushed = Set(flushed.map { path in
                    path == from ? to : path.hasPrefix(from + "/") ? to + path.dropFirst(from.count) : path
                })
                if to == target && placed == nil { placed = flushed }
            }
        }
        var expected = ["."]
        for case let url as URL in FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) ?? .init() {
            expected.append(String(url.standardizedFileURL.path.dropFirst(target.count + 1)))
        }
        return expected.sorted().filter { relative in
            !(placed ?? []).contains(relative == "." ? target : target + "/" + relative)
        }
    }

    /// `openat(AT_FDCWD, "PATH", …) = FD`: the path and descriptor of a successful open.
    private static func opened(_ line: String) -> (String, Int)? {
        guard line.hasPrefix("openat("), let descriptor = result(line), descriptor >= 0,
              let path = quoted(line).first else { return nil }
        return (path, descriptor)
    }

    /// `fsync(FD) = 0` or `fdatasync(FD) = 0`: the descriptor flushed.
    private static func flushedDescriptor(_ line: String) -> Int? {
        guard line.hasPrefix("fsync(") || line.hasPrefix("fdatasync("), result(line) == 0,
              let open = line.firstIndex(of: "("), let close = line.firstIndex(of: ")") else { return nil }
        return Int(line[line.index(after: open)..<close])
    }

    /// `rename("A", "B") = 0` and the `renameat` forms: the old and new paths.
    private static func renamed(_ line: String) -> (String, String)? {
        guard line.hasPrefix("rename"), result(line) == 0 else { return nil }
        let paths = quoted(line)
        return paths.count == 2 ? (paths[0], paths[1]) : nil
    }

    /// The number after the last " = ".
    private static func result(_ line: String) -> Int? {
        guard let range = line.range(of: " = ", options: .backwards) else { return nil }
        return Int(line[range.upperBound...].prefix { $0 == "-" || $0.isNumber })
    }

    /// The double-quoted strings of a line, in order (strace escapes a quote inside one as \").
    private static func quoted(_ line: String) -> [String] {
        var strings: [String] = []
        var current: String?
        var escaped = false
        for character in line {
            if var text = current {
                if escaped {
                    text.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    strings.append(text)
                    current = nil
                    continue
                } else {
                    text.append(character)
                }
                current = text
            } else if character == "\"" {
                current = ""
            }
        }
        return strings
    }
}
