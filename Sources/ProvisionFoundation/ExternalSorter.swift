import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sorts more records than should be held in memory: records (a key and a value, byte strings)
/// come back by key, bytewise, and records of equal keys in the order they were appended.
///
/// Up to `memoryBudget` bytes of records are held. Past it, the held records are sorted and
/// written as a run to a temporary file in `directory`, and the runs are merged when read. The
/// files are unlinked as soon as they are made, so nothing is left behind however the process
/// ends; they live on the disk of `directory` (not in a RAM-backed temporary directory).
public final class ExternalSorter {
    /// A temporary run file that could not be made, written or read.
    public struct FileError: Error, CustomStringConvertible {
        /// "create", "write" or "read".
        public var operation: String
        /// The directory the run files are in.
        public var directory: String
        /// The `errno` of the failure.
        public var code: Int32

        public var description: String {
            "cannot \(operation) a temporary sort file in \(directory): \(String(cString: strerror(code)))"
        }
    }

    public let directory: URL
    public let memoryBudget: Int
    /// Records as `[key length u32][value length u32][key][value]`, appended.
    private var arena: [UInt8] = []
    private var offsets: [Int] = []
    private var runs: [Int32] = []
    private var consumed = false

    /// Records appended so far.
    public private(set) var count = 0

    /// Sorts records in memory up to `memoryBudget` bytes, then in runs on the disk of `directory`.
    public init(directory: URL, memoryBudget: Int = 64 << 20) {
        self.directory = directory
        self.memoryBudget = max(memoryBudget, 1)
    }

    deinit {
        for fd in runs { close(fd) }
    }

    /// The bytes of records held in memory now (records and their index).
    public var heldBytes: Int { arena.count + offsets.count * MemoryLayout<Int>.stride }

    /// The runs written to disk so far.
    public var spilledRuns: Int { runs.count }

    /// Adds one record.
    ///
    /// - Throws: `FileError` when a run cannot be written (a full disk is `ENOSPC`).
    public func append(key: [UInt8], value: [UInt8]) throws {
        precondition(!consumed, "an ExternalSorter is read once")
        offsets.append(arena.count)
        Self.appendLength(key.count, to: &arena)
        Self.appendLength(value.count, to: &arena)
        arena += key
        arena += value
        count += 1
        if heldBytes >= memoryBudget { try spill() }
    }

    /// Calls `body` with every record, by key and then in the order appended. The buffers are
    /// valid during the call only. The sorter is spent after.
    ///
    /// - Throws: `FileError` when a run cannot be read, or what `body` throws.
    public func forEachSorted(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        precondition(!consumed, "an ExternalSorter is read once")
        consumed = true
        if runs.isEmpty {
            let order = sortedOffsets()
            try arena.withUnsafeBytes { base in
                for offset in order {
                    let (key, value) = Self.record(in: base, at: offset)
                    try body(key, value)
                }
            }
            arena = []
            offsets = []
            return
        }
        if !offsets.isEmpty { try spill() }
        arena = []
        offsets = []
        let readers = runs.map { RunReader(fd: $0, directory: directory) }
        // A binary heap of the runs not yet exhausted, by their current key, then run order.
        var heap: [Int] = []
        for index in readers.indices where try readers[index].advance() { heap.append(index) }
        func less(_ a: Int, _ b: Int) -> Bool {
            let order = Self.compare(readers[a].key, readers[b].key)
            return order != 0 ? order < 0 : a < b
        }
        func siftDown(_ start: Int) {
            var i = start
            while true {
                let left = 2 * i + 1, right = left + 1
                var smallest = i
                if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
                if smallest == i { return }
                heap.swapAt(i, smallest)
                i = smallest
            }
        }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
        while let top = heap.first {
            try body(readers[top].key, readers[top].value)
            if try readers[top].advance() {
                siftDown(0)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
                if !heap.isEmpty { siftDown(0) }
            }
        }
    }

    // MARK: Runs

    /// Writes the held records, sorted, to a new unlinked file, and lets them go.
    private func spill() throws {
        let order = sortedOffsets()
        var template = Array(directory.appendingPathComponent(".provision-sort-XXXXXX").path.utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw FileError(operation: "create", directory: directory.path, code: errno) }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        runs.append(fd)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        try arena.withUnsafeBytes { base in
            for offset in order {
                let (key, value) = Self.record(in: base, at: offset)
                let end = offset + 8 + key.count + value.count
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: base[offset..<end]))
                if buffer.count >= 1 << 20 {
                    try write(buffer, to: fd)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        try write(buffer, to: fd)
        arena.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8], to fd: Int32) throws {
        try bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw FileError(operation: "write", directory: directory.path, code: errno)
                }
                done += n
            }
        }
    }

    /// The held records' offsets by key, then by offset (the order appended).
    private func sortedOffsets() -> [Int] {
        arena.withUnsafeBytes { base in
            offsets.sorted { a, b in
                let order = Self.compare(Self.record(in: base, at: a).key, Self.record(in: base, at: b).key)
                return order != 0 ? order < 0 : a < b
            }
        }
    }

    /// Reads one run from its start, a record at a time, through a buffer of its own.
    private final class RunReader {
        let fd: Int32
        let directory: URL
        var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 8)
        var start = 0, end = 0
        var filePosition: off_t = 0
        /// The current record; valid until the next `advance`.
        var key = UnsafeRawBufferPointer(start: nil, count: 0)
        var value = UnsafeRawBufferPointer(start: nil, count: 0)

        init(fd: Int32, directory: URL) {
            self.fd = fd
            self.directory = directory
        }

        deinit { storage.deallocate() }

        /// Moves to the next record; false at the end of the run.
        func advance() throws -> Bool {
            guard try fill(8) else { return false }
            let view = UnsafeRawBufferPointer(storage)
            let keyLength = Int(ExternalSorter.length(in: view, at: start))
            let valueLength = Int(ExternalSorter.length(in: view, at: start + 4))
            guard try fill(8 + keyLength + valueLength) else { throw failure(EIO) }
            let base = UnsafeRawPointer(storage.baseAddress!) + start + 8
            key = UnsafeRawBufferPointer(start: base, count: keyLength)
            value = UnsafeRawBufferPointer(start: base + keyLength, count: valueLength)
            start += 8 + keyLength + valueLength
            return true
        }

        /// Makes `count` bytes from `start` available; false at a clean end of the run.
        private func fill(_ count: Int) throws -> Bool {
            if end - start >= count { return true }
            if start > 0 {
                memmove(storage.baseAddress!, storage.baseAddress! + start, end - start)
                end -= start
                start = 0
            }
            if storage.count < count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 8)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[0..<end]))
                storage.deallocate()
                storage = larger
            }
            while end < count {
                let n = pread(fd, storage.baseAddress! + end, storage.count - end, filePosition)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw failure(errno)
                }
                if n == 0 {
                    if end == 0 { return false }
                    throw failure(EIO)
                }
                end += n
                filePosition += off_t(n)
            }
            return true
        }

        private func failure(_ code: Int32) -> FileError {
            FileError(operation: "read", directory: directory.path, code: code)
        }
    }

    // MARK: Records

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        let value = UInt32(length)
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    fileprivate static func length(in base: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(base[offset]) | UInt32(base[offset + 1]) << 8
            | UInt32(base[offset + 2]) << 16 | UInt32(base[offset + 3]) << 24
    }

    private static func record(in base: UnsafeRawBufferPointer, at offset: Int)
        -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let keyStart = offset + 8, keyLength = Int(length(in: base, at: offset))
        let valueStart = keyStart + keyLength, valueLength = Int(length(in: base, at: offset + 4))
        return (UnsafeRawBufferPointer(rebasing: base[keyStart..<valueStart]),
                UnsafeRawBufferPointer(rebasing: base[valueStart..<(valueStart + valueLength)]))
    }

    /// Bytewise order of `a` and `b`: negative, zero or positive.
    public static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
