import Foundation

/// libdeflate (Debian's `libdeflate0`), opened at run time when the system has it: whole-buffer
/// gzip and zlib decoders about twice as fast as zlib's, and vectorised Adler-32 and CRC-32.
///
/// Why: every tile an apply stores is inflated to be verified and its Adler-32 taken for the
/// zlib form the offline database keeps; on a 1M-tile apply from an MBTiles archive that was a
/// quarter of all CPU time. Why at run time and not through a module map: the library is only
/// faster, never needed, so the build and a machine without it stay as they are (zlib does the
/// work there). An export inflates every stored zlib stream and takes its CRC-32 for the gzip
/// member it writes: there zlib's `inflate`, `adler32` and `crc32` were 43% of the CPU time of a
/// 200k-tile PMTiles export (perf). The output is the same bytes either way; zlib also gives every error message, so
/// a body libdeflate refuses is decoded again by zlib to say why.
///
/// Why no module map like `CZlib`: a module map needs `libdeflate.h`, which only Debian's
/// `libdeflate-dev` ships; the runtime package `libdeflate0` (all the suite installs, and all a
/// user's machine may have) has none, and the product must build and run where libdeflate is
/// absent. So the four functions are looked up by name here, in this one file, and nowhere else.
///
/// Audited (Debian's `libdeflate0` 1.14-1, whose `nm -D` lists all six symbols): the C function
/// types below match upstream's `libdeflate.h` declarations (`size_t` is `Int`, `enum
/// libdeflate_result` an `int` whose `LIBDEFLATE_SUCCESS` is 0, the decompressor an opaque
/// pointer); `unsafeBitCast` only turns `dlsym`'s pointer into that C function type. The
/// library is never closed, so the pointers stay valid; a decompressor is allocated, used and
/// freed by one call on one thread, and `libdeflate_adler32` keeps no state, so the functions
/// are `@Sendable` and need no `@unchecked`. Where the system's library lacks a symbol, none is used.
enum Libdeflate {
    private typealias Alloc = @Sendable @convention(c) () -> OpaquePointer?
    private typealias Free = @Sendable @convention(c) (OpaquePointer?) -> Void
    private typealias GzipDecompress = @Sendable @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutableRawPointer?, Int,
                                                                 UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int>?) -> Int32
    private typealias ZlibDecompress = GzipDecompress
    private typealias Adler32 = @Sendable @convention(c) (UInt32, UnsafeRawPointer?, Int) -> UInt32
    private typealias CRC32 = Adler32

    private struct Functions: Sendable {
        let alloc: Alloc
        let free: Free
        let gzipDecompress: GzipDecompress
        let zlibDecompress: ZlibDecompress
        let adler32: Adler32
        let crc32: CRC32
    }

    private static let functions: Functions? = {
        if ProcessInfo.processInfo.environment["PROVISION_LIBDEFLATE"] == "0" { return nil }
        guard let library = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL),
              let alloc = dlsym(library, "libdeflate_alloc_decompressor"),
              let free = dlsym(library, "libdeflate_free_decompressor"),
              let gzip = dlsym(library, "libdeflate_gzip_decompress_ex"),
              let zlib = dlsym(library, "libdeflate_zlib_decompress_ex"),
              let adler = dlsym(library, "libdeflate_adler32"),
              let crc = dlsym(library, "libdeflate_crc32") else { return nil }
        return Functions(alloc: unsafeBitCast(alloc, to: Alloc.self), free: unsafeBitCast(free, to: Free.self),
                         gzipDecompress: unsafeBitCast(gzip, to: GzipDecompress.self),
                         zlibDecompress: unsafeBitCast(zlib, to: ZlibDecompress.self),
                         adler32: unsafeBitCast(adler, to: Adler32.self), crc32: unsafeBitCast(crc, to: CRC32.self))
    }()

    /// Whether the library was found (and not turned off with `PROVISION_LIBDEFLATE=0`).
    static var isAvailable: Bool { functions != nil }

    /// The Adler-32 of `bytes`, or nil without the library.
    static func adler32(_ bytes: UnsafeRawBufferPointer) -> UInt32? {
        functions.map { $0.adler32(1, bytes.baseAddress, bytes.count) }
    }

    /// The CRC-32 of `bytes`, or nil without the library.
    static func crc32(_ bytes: UnsafeRawBufferPointer) -> UInt32? {
        functions.map { $0.crc32(0, bytes.baseAddress, bytes.count) }
    }

    /// One zlib stream of exactly `zlib.count` bytes inflated, at most `limit` bytes; nil without
    /// the library, when the stream is not well formed (a preset dictionary included), is
    /// followed by more bytes, or inflates beyond `limit`: the caller then asks zlib, which
    /// explains what is wrong.
    ///
    /// Why a guess that grows: a zlib stream does not state its inflated size, and libdeflate
    /// decodes into one buffer it does not grow. Vector tiles inflate about 3 to 4 times; a
    /// buffer too small costs one more decode at four times the size.
    static func inflateZlib(_ zlib: UnsafeRawBufferPointer, limit: Int) -> Data? {
        guard let functions, !zlib.isEmpty, let decompressor = functions.alloc() else { return nil }
        defer { functions.free(decompressor) }
        // The most a DEFLATE stream can expand is about 1032 to 1.
        let ceiling = min(limit, zlib.count &* 1032 &+ 64)
        var capacity = min(ceiling, max(4 * zlib.count, 4096))
        while true {
            guard let buffer = malloc(max(1, capacity)) else { return nil }
            var consumed = 0, produced = 0
            let status = functions.zlibDecompress(decompressor, zlib.baseAddress, zlib.count, buffer, capacity, &consumed, &produced)
            if status == 0, consumed == zlib.count {
                guard produced > 0 else {
                    Foundation.free(buffer)
                    return Data()
                }
                return Data(bytesNoCopy: capacity - produced > 1024 ? realloc(buffer, produced) ?? buffer : buffer,
                            count: produced, deallocator: .free)
            }
            Foundation.free(buffer)
            // 3 is LIBDEFLATE_INSUFFICIENT_SPACE: the output did not fit.
            guard status == 3, capacity < ceiling else { return nil }
            capacity = min(ceiling, capacity &* 4)
        }
    }

    /// One gzip member of exactly `gzip.count` bytes inflated into a buffer of `size` bytes that
    /// it must fill exactly (the size its trailer states); nil without the library, when the
    /// member is not well formed, does not fill the buffer or is followed by more bytes: the
    /// caller then asks zlib, which explains what is wrong.
    static func inflateGzip(_ gzip: UnsafeRawBufferPointer, size: Int) -> Data? {
        guard let functions, size > 0, let decompressor = functions.alloc() else { return nil }
        defer { functions.free(decompressor) }
        guard let buffer = malloc(size) else { return nil }
        var consumed = 0, produced = 0
        let status = functions.gzipDecompress(decompressor, gzip.baseAddress, gzip.count, buffer, size, &consumed, &produced)
        guard status == 0, consumed == gzip.count, produced == size else {
            Foundation.free(buffer)
            return nil
        }
        return Data(bytesNoCopy: buffer, count: produced, deallocator: .free)
    }
}
