import Foundation
import ProvisionFoundation
import ProvisionModel

/// Feeds the rows a `NextStoreWriter` adds to a `ContentHasher` on a thread of its own, in
/// the order they were added.
///
/// Why a thread: the writer is the one stage of an apply that every tile passes through in
/// order, and hashing each row twice (the content digest and its chunk's) was a tenth of its
/// time. Rows go over in batches, so the hand-over costs a lock per batch, not per row; at
/// most `batchLimit` batches wait, so the bodies held for hashing stay bounded.
struct HashingStage {
    /// One row to hash: its chunk key, its key line and its stored bytes.
    struct Row: Sendable {
        var key: ChunkKey
        var line: [UInt8]
        var bytes: Data
    }

    /// Rows per batch.
    static let batchSize = 64
    /// Batches waiting for the thread, at most.
    static let batchLimit = 8

    private var pending: [Row] = []
    private let shared: Shared

    /// Starts hashing after the rows `hasher` already holds.
    init(hasher: ContentHasher) {
        shared = Shared(hasher: hasher)
        pending.reserveCapacity(Self.batchSize)
    }

    /// Queues a row; blocks while `batchLimit` batches wait.
    mutating func add(_ key: ChunkKey, line: [UInt8], bytes: Data) {
        pending.append(Row(key: key, line: line, bytes: bytes))
        if pending.count == Self.batchSize { submit() }
    }

    private mutating func submit() {
        guard !pending.isEmpty else { return }
        shared.push(pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// Waits until every row is hashed, stops the thread and returns the hasher.
    mutating func finish() throws -> ContentHasher {
        submit()
        return try shared.finish()
    }

    /// Stops the thread without waiting for the rows queued (after an error).
    mutating func cancel() {
        pending.removeAll()
        shared.cancel()
    }

    private final class Shared: Sendable {
        private struct State {
            var batches: [[Row]] = []
            var closed = false
            var cancelled = false
            var result: Result<ContentHasher, any Error>?
        }

        private let state = Mutex(State())

        init(hasher: ContentHasher) {
            let state = self.state
            let thread = Thread {
                var hasher = hasher
                let result = Result { () throws -> ContentHasher in
                    while true {
                        let batch = state.withLock(when: { !$0.batches.isEmpty || $0.closed || $0.cancelled }) { state in
                            state.cancelled || state.batches.isEmpty ? nil : state.batches.removeFirst()
                        }
                        guard let batch else { break }
                        for row in batch {
                            try row.line.withUnsafeBytes { line in
                                try row.bytes.withUnsafeBytes { try hasher.add(row.key, line, $0) }
                            }
                        }
                    }
                    if state.read({ $0.cancelled }) { throw CancellationError() }
                    return hasher
                }
                state.withLock { $0.result = result }
            }
            thread.name = "provision.hash"
            thread.start()
        }

        func push(_ batch: [Row]) {
            // A stage that was stopped takes nothing more (and never blocks).
            state.withLock(when: { $0.batches.count < HashingStage.batchLimit || $0.cancelled || $0.result != nil }) { state in
                if !state.cancelled, state.result == nil { state.batches.append(batch) }
            }
        }

        func finish() throws -> ContentHasher {
            state.withLock { $0.closed = true }
            return try state.withLock(when: { $0.result != nil }) { $0.result! }.get()
        }

        func cancel() {
            state.withLock { state in
                state.cancelled = true
                state.batches.removeAll()
            }
        }
    }
}
