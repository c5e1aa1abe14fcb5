/// Formats doubles the way MapLibre Native's `util::toString(double)` does: Grisu2 digits,
/// then rapidjson's "prettify" layout without a trailing `.0`.
///
/// Why not Swift's `description`: Grisu2 always round-trips but does not always pick the
/// closest shortest digits. MapLibre writes the western edge of the world as
/// `-20037508.342789245` where the shortest closest form is `…244`, and `{bbox-epsg-3857}` URLs
/// must match what a device would request. Integral values print without a fraction (`0`,
/// `512`), as MapLibre's modified prettify does.
enum MapLibreNumberFormat {
    /// The text MapLibre Native gives `value`.
    static func string(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        if value == 0 { return value.sign == .minus ? "-0" : "0" }
        var (digits, k) = grisu2(abs(value))
        let text = prettify(&digits, k: k)
        return (value < 0 ? "-" : "") + text
    }

    // MARK: - Grisu2 (Loitsch 2010), with rapidjson's constants and rounding

    private struct DiyFp {
        var f: UInt64
        var e: Int

        static let hiddenBit: UInt64 = 1 << 52

        init(_ f: UInt64, _ e: Int) {
            self.f = f
            self.e = e
        }

        init(_ d: Double) {
            let bits = d.bitPattern
            let biased = Int((bits >> 52) & 0x7FF)
            let significand = bits & (DiyFp.hiddenBit - 1)
            if biased != 0 {
                self.init(significand + DiyFp.hiddenBit, biased - 1075)
            } else {
                self.init(significand, -1074)
            }
        }

        static func - (a: DiyFp, b: DiyFp) -> DiyFp { DiyFp(a.f &- b.f, a.e) }

        /// The product, rounded to the upper 64 bits.
        static func * (a: DiyFp, b: DiyFp) -> DiyFp {
            let (high, low) = a.f.multipliedFullWidth(by: b.f)
            return DiyFp(high &+ (low >> 63), a.e + b.e + 64)
        }

        func normalized() -> DiyFp {
            let shift = f.leadingZeroBitCount
            return DiyFp(f << UInt64(shift), e - shift)
        }

        func normalizedBoundary() -> DiyFp {
            var r = self
            while r.f & (DiyFp.hiddenBit << 1) == 0 {
                r.f <<= 1
                r.e -= 1
            }
            r.f <<= 10 // 64 - 52 - 2
            r.e -= 10
            return r
        }

        func normalizedBoundaries() -> (minus: DiyFp, plus: DiyFp) {
            let plus = DiyFp((f << 1) + 1, e - 1).normalizedBoundary()
            var minus = f == DiyFp.hiddenBit ? DiyFp((f << 2) - 1, e - 2) : DiyFp((f << 1) - 1, e - 1)
            minus.f <<= UInt64(minus.e - plus.e)
            minus.e = plus.e
            return (minus, plus)
        }
    }

    /// 10^k for k = -348, -340, …, 340 as normalised 64-bit significands and binary exponents,
    /// rounded to nearest (generated from exact rational arithmetic).
    private static let cachedPowers: [(UInt64, Int)] = [
        (0xfa8fd5a0081c0288, -1220),
        (0xbaaee17fa23ebf76, -1193),
        (0x8b16fb203055ac76, -1166),
        (0xcf42894a5dce35ea, -1140),
        (0x9a6bb0aa55653b2d, -1113),
        (0xe61acf033d1a45df, -1087),
        (0xab70fe17c79ac6ca, -1060),
        (0xff77b1fcbebcdc4f, -1034),
        (0xbe5691ef416bd60c, -1007),
        (0x8dd01fad907ffc3c, -980),
        (0xd3515c2831559a83, -954),
        (0x9d71ac8fada6c9b5, -927),
        (0xea9c227723ee8bcb, -901),
        (0xaecc49914078536d, -874),
        (0x823c12795db6ce57, -847),
        (0xc21094364dfb5637, -821),
        (0x9096ea6f3848984f, -794),
        (0xd77485cb25823ac7, -768),
        (0xa086cfcd97bf97f4, -741),
        (0xef340a98172aace5, -715),
        (0xb23867fb2a35b28e, -688),
        (0x84c8d4dfd2c63f3b, -661),
        (0xc5dd44271ad3cdba, -635),
        (0x936b9fcebb25c996, -608),
        (0xdbac6c247d62a584, -582),
        (0xa3ab66580d5fdaf6, -555),
        (0xf3e2f893dec3f126, -529),
        (0xb5b5ada8aaff80b8, -502),
        (0x87625f056c7c4a8b, -475),
        (0xc9bcff6034c13053, -449),
        (0x964e858c91ba2655, -422),
        (0xdff9772470297ebd, -396),
        (0xa6dfbd9fb8e5b88f, -369),
        (0xf8a95fcf88747d94, -343),
        (0xb94470938fa89bcf, -316),
        (0x8a08f0f8bf0f156b, -289),
        (0xcdb02555653131b6, -263),
        (0x993fe2c6d07b7fac, -236),
        (0xe45c10c42a2b3b06, -210),
        (0xaa242499697392d3, -183),
        (0xfd87b5f28300ca0e, -157),
        (0xbce5086492111aeb, -130),
        (0x8cbccc096f5088cc, -103),
        (0xd1b71758e219652c, -77),
        (0x9c40000000000000, -50),
        (0xe8d4a51000000000, -24),
        (0xad78ebc5ac620000, 3),
        (0x813f3978f8940984, 30),
        (0xc097ce7bc90715b3, 56),
        (0x8f7e32ce7bea5c70, 83),
        (0xd5d238a4abe98068, 109),
        (0x9f4f2726179a2245, 136),
        (0xed63a231d4c4fb27, 162),
        (0xb0de65388cc8ada8, 189),
        (0x83c7088e1aab65db, 216),
        (0xc45d1df942711d9a, 242),
        (0x924d692ca61be758, 269),
        (0xda01ee641a708dea, 295),
        (0xa26da3999aef774a, 322),
        (0xf209787bb47d6b85, 348),
        (0xb454e4a179dd1877, 375),
        (0x865b86925b9bc5c2, 402),
        (0xc83553c5c8965d3d, 428),
        (0x952ab45cfa97a0b3, 455),
        (0xde469fbd99a05fe3, 481),
        (0xa59bc234db398c25, 508),
        (0xf6c69a72a3989f5c, 534),
        (0xb7dcbf5354e9bece, 561),
        (0x88fcf317f22241e2, 588),
        (0xcc20ce9bd35c78a5, 614),
        (0x98165af37b2153df, 641),
        (0xe2a0b5dc971f303a, 667),
        (0xa8d9d1535ce3b396, 694),
        (0xfb9b7cd9a4a7443c, 720),
        (0xbb764c4ca7a44410, 747),
        (0x8bab8eefb6409c1a, 774),
        (0xd01fef10a657842c, 800),
        (0x9b10a4e5e9913129, 827),
        (0xe7109bfba19c0c9d, 853),
        (0xac2820d9623bf429, 880),
        (0x80444b5e7aa7cf85, 907),
        (0xbf21e44003acdd2d, 933),
        (0x8e679c2f5e44ff8f, 960),
        (0xd433179d9c8cb841, 986),
        (0x9e19db92b4e31ba9, 1013),
        (0xeb96bf6ebadf77d9, 1039),
        (0xaf87023b9bf0ee6b, 1066)
    ]

    private static let pow10: [UInt64] = (0..<10).map { n in (0..<n).reduce(UInt64(1)) { acc, _ in acc * 10 } }

    private static func cachedPower(forBinaryExponent e: Int) -> (power: DiyFp, decimalExponent: Int) {
        let dk = Double(-61 - e) * 0.30102999566398114 + 347
        var k = Int(dk)
        if dk - Double(k) > 0 { k += 1 }
        let index = (k >> 3) + 1
        let (f, be) = cachedPowers[index]
        return (DiyFp(f, be), -(-348 + index * 8))
    }

    private static func grisu2(_ value: Double) -> (digits: [UInt8], k: Int) {
        let v = DiyFp(value)
        let (minus, plus) = v.normalizedBoundaries()
        let (c, decimalExponent) = cachedPower(forBinaryExponent: plus.e)
        let w = v.normalized() * c
        var wPlus = plus * c
        var wMinus = minus * c
        wMinus.f += 1
        wPlus.f -= 1
        var k = decimalExponent
        let digits = digitGen(w, wPlus, delta: wPlus.f - wMinus.f, k: &k)
        return (digits, k)
    }

    private static func digitGen(_ w: DiyFp, _ mp: DiyFp, delta deltaIn: UInt64, k: inout Int) -> [UInt8] {
        var delta = deltaIn
        let shift = UInt64(-mp.e)
        let one = DiyFp(UInt64(1) << shift, mp.e)
        let distance = (mp - w).f
        var p1 = UInt32(truncatingIfNeeded: mp.f >> shift)
        var p2 = mp.f & (one.f - 1)
        var kappa = String(p1).count
        var buffer: [UInt8] = []
        buffer.reserveCapacity(20)

        while kappa > 0 {
            let divisor = UInt32(pow10[kappa - 1])
            let d = p1 / divisor
            p1 %= divisor
            if d != 0 || !buffer.isEmpty { buffer.append(UInt8(ascii: "0") + UInt8(d)) }
            kappa -= 1
            let rest = (UInt64(p1) << shift) + p2
            if rest <= delta {
                k += kappa
                round(&buffer, delta: delta, rest: rest, tenKappa: pow10[kappa] << shift, distance: distance)
                return buffer
            }
        }
        while true {
            p2 = p2 &* 10
            delta = delta &* 10
            let d = UInt8(truncatingIfNeeded: p2 >> shift)
            if d != 0 || !buffer.isEmpty { buffer.append(UInt8(ascii: "0") + d) }
            p2 &= one.f - 1
            kappa -= 1
            if p2 < delta {
                k += kappa
                // rapidjson 1.1.0, which MapLibre builds with, scales the distance only for
                // fewer than 9 fractional digits and otherwise skips the final rounding. That is
                // why the world's western edge prints as -20037508.342789245 and not …244.
                let index = -kappa
                round(&buffer, delta: delta, rest: p2, tenKappa: one.f,
                      distance: distance &* (index < 9 ? pow10[index] : 0))
                return buffer
            }
        }
    }

    private static func round(_ buffer: inout [UInt8], delta: UInt64, rest restIn: UInt64, tenKappa: UInt64,
                              distance: UInt64) {
        var rest = restIn
        while rest < distance && delta - rest >= tenKappa
            && (rest + tenKappa < distance || distance - rest > rest + tenKappa - distance) {
            buffer[buffer.count - 1] -= 1
            rest += tenKappa
        }
    }

    // MARK: - Layout

    /// Lays out `digits` × 10^k: plain integers up to 21 digits, plain decimals, small values
    /// as `0.000…`, and otherwise `d.ddde±x` with the exponent written without a `+`.
    private static func prettify(_ digits: inout [UInt8], k: Int) -> String {
        let length = digits.count
        let kk = length + k
        var out: [UInt8]
        if k >= 0 && kk <= 21 {
            out = digits + Array(repeating: UInt8(ascii: "0"), count: k)
        } else if kk > 0 && kk <= 21 {
            out = Array(digits[0..<kk]) + [UInt8(ascii: ".")] + Array(digits[kk...])
        } else if kk > -6 && kk <= 0 {
            out = Array("0.".utf8) + Array(repeating: UInt8(ascii: "0"), count: -kk) + digits
        } else if kk < -324 {
            out = [UInt8(ascii: "0")]
        } else if length == 1 {
            out = digits + [UInt8(ascii: "e")] + Array(String(kk - 1).utf8)
        } else {
            out = [digits[0], UInt8(ascii: ".")] + Array(digits[1...]) + [UInt8(ascii: "e")]
                + Array(String(kk - 1).utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
