import Foundation

/// SHA-256 (FIPS 180-4), incremental.
///
/// Why our own: Linux has no CryptoKit and third-party packages are not an option; digests of
/// job files, documents and store content are what reproducibility is checked against.
public struct SHA256: Sendable {
    private var state: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// A fresh hash.
    public init() {}

    /// The hex digest of `data`.
    public static func hex(_ data: Data) -> String {
        var h = SHA256()
        h.update(data)
        return h.finalizeHex()
    }

    /// The hex digest of the UTF-8 bytes of `text`.
    public static func hex(_ text: String) -> String { hex(Data(text.utf8)) }

    /// Feeds bytes.
    public mutating func update(_ data: Data) {
        length &+= UInt64(data.count)
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            guard var base = raw.baseAddress else { return }
            var remaining = raw.count
            if !buffer.isEmpty {
                let take = min(64 - buffer.count, remaining)
                buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
                base += take
                remaining -= take
                if buffer.count == 64 {
                    buffer.withUnsafeBytes { compress($0.baseAddress!) }
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            while remaining >= 64 {
                compress(base)
                base += 64
                remaining -= 64
            }
            if remaining > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: remaining)) }
        }
    }

    /// Feeds the UTF-8 bytes of a string.
    public mutating func update(_ text: String) { update(Data(text.utf8)) }

    /// Pads, finishes and returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        tail.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                compress(all.baseAddress! + offset)
                offset += 64
            }
        }
        buffer.removeAll()
        var out: [UInt8] = []
        for word in state { for i in (0..<4).reversed() { out.append(UInt8(truncatingIfNeeded: word >> (UInt32(i) * 8))) } }
        return out
    }

    /// `finalize()` as lower-case hex.
    public mutating func finalizeHex() -> String {
        SHA256.hexString(finalize())
    }

    /// Lower-case hex of bytes (a table lookup per nibble: this runs once per stored row).
    public static func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One 64-byte block at `block`. The schedule lives in a fixed-size stack buffer and the
    /// working variables in locals: no heap traffic and no bounds checks in the inner loop.
    private mutating func compress(_ block: UnsafeRawPointer) {
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { buffer in
            let w = buffer.baseAddress!
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
            }
            for t in 16..<64 {
                let x = w[t - 15], y = w[t - 2]
                let s0 = ((x >> 7) | (x << 25)) ^ ((x >> 18) | (x << 14)) ^ (x >> 3)
                let s1 = ((y >> 17) | (y << 15)) ^ ((y >> 19) | (y << 13)) ^ (y >> 10)
                w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
            }
            SHA256.k.withUnsafeBufferPointer { kBuffer in
                let k = kBuffer.baseAddress!
                for t in 0..<64 {
                    let s1 = ((e >> 6) | (e << 26)) ^ ((e >> 11) | (e << 21)) ^ ((e >> 25) | (e << 7))
                    let ch = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ ch &+ k[t] &+ w[t]
                    let s0 = ((a >> 2) | (a << 30)) ^ ((a >> 13) | (a << 19)) ^ ((a >> 22) | (a << 10))
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    h = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ s0 &+ maj
                }
            }
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }

}
