import Foundation

/// The 512-byte ustar header of a regular file, as a reproducible extract writes it and its reader
/// reads it back.
///
/// Written: `name` (at most 100 bytes, no prefix), mode 0644, uid and gid 0, `size`, `mtime`, type
/// `0`, magic `ustar\0` version `00`, empty user and group names, device numbers 0; the checksum
/// is the sum of the header's bytes with its own field read as spaces (POSIX).
struct TarHeader: Equatable {
    static let blockSize = 512
    /// Records end on a multiple of 20 blocks, as tar and Python's tarfile pad.
    static let recordSize = 20 * 512

    var name: String
    var size: Int
    var mtime: Int

    /// `count` rounded up to whole blocks.
    static func padded(_ count: Int) -> Int { (count + blockSize - 1) / blockSize * blockSize }

    /// The header block.
    func encoded() -> [UInt8] {
        var block = [UInt8](repeating: 0, count: TarHeader.blockSize)
        func put(_ text: String, at offset: Int, width: Int) {
            for (i, byte) in text.utf8.prefix(width).enumerated() { block[offset + i] = byte }
        }
        func octal(_ value: Int, at offset: Int, width: Int) {
            let digits = String(value, radix: 8)
            put(String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits, at: offset, width: width - 1)
        }
        put(name, at: 0, width: 100)
        octal(0o644, at: 100, width: 8)
        octal(0, at: 108, width: 8)
        octal(0, at: 116, width: 8)
        octal(size, at: 124, width: 12)
        octal(mtime, at: 136, width: 12)
        block[156] = UInt8(ascii: "0")
        put("ustar", at: 257, width: 6)
        put("00", at: 263, width: 2)
        octal(0, at: 329, width: 8)
        octal(0, at: 337, width: 8)
        for i in 148..<156 { block[i] = UInt8(ascii: " ") }
        let sum = block.reduce(0) { $0 + Int($1) }
        let digits = String(sum, radix: 8)
        put(String(repeating: "0", count: max(0, 6 - digits.count)) + digits, at: 148, width: 6)
        block[154] = 0
        block[155] = UInt8(ascii: " ")
        return block
    }

    /// Reads a header block: nil when its checksum fails or it is not a regular file's.
    static func decode(_ block: [UInt8]) -> TarHeader? {
        guard block.count == blockSize else { return nil }
        func text(_ offset: Int, _ width: Int) -> String {
            let field = block[offset..<offset + width]
            return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
        }
        func number(_ offset: Int, _ width: Int) -> Int? {
            let digits = text(offset, width).trimmingCharacters(in: CharacterSet(charactersIn: " "))
            return digits.isEmpty ? nil : Int(digits, radix: 8)
        }
        var unsigned = 0
        for (i, byte) in block.enumerated() { unsigned += (148..<156).contains(i) ? 0x20 : Int(byte) }
        guard let checksum = number(148, 8), checksum == unsigned,
              block[156] == UInt8(ascii: "0") || block[156] == 0,
              let size = number(124, 12), let mtime = number(136, 12) else { return nil }
        var name = text(0, 100)
        if text(257, 5) == "ustar" {
            let prefix = text(345, 155)
            if !prefix.isEmpty { name = prefix + "/" + name }
        }
        return TarHeader(name: name, size: size, mtime: mtime)
    }
}
