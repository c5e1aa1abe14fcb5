import Foundation

extension SHA256 {
    /// The size and lower-case hex digest of the file at `url`, read in 1 MiB blocks so a
    /// database of gigabytes is hashed without being held in memory.
    public static func file(at url: URL) throws -> (bytes: Int64, hex: String) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var hash = SHA256()
        var bytes: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            buffer.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            bytes += Int64(count)
        }
        return (bytes, hash.finalizeHex())
    }
}
