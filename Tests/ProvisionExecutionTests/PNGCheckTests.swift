import Foundation
import ProvisionCodecs
import ProvisionModel
import ProvisionStore
import XCTest
@testable import ProvisionExecution

/// PNG bodies are read down to their inflated pixel data: a file libpng cannot decode is refused.
final class PNGCheckTests: XCTestCase {
    /// A PNG of the given chunks (CRCs computed), after the signature.
    private func png(_ chunks: [(String, [UInt8])]) -> Data {
        Data(ImageEncoders.pngSignature + chunks.flatMap { ImageEncoders.chunk($0.0, $0.1) })
    }

    private func ihdr(width: UInt32 = 5, height: UInt32 = 3, depth: UInt8 = 8, colorType: UInt8 = 6,
                      interlace: UInt8 = 0) -> (String, [UInt8]) {
        ("IHDR", ImageEncoders.bigEndian(width) + ImageEncoders.bigEndian(height) + [depth, colorType, 0, 0, interlace])
    }

    private func zlib(_ raw: [UInt8]) throws -> [UInt8] {
        [UInt8](try Zlib.deflate(Data(raw)))
    }

    /// Raw image data of a 5x3 RGBA image: three rows of a filter byte and 20 bytes.
    private let raw5x3 = ImageEncoders.rawImageData(width: 5, height: 3, bitsPerPixel: 32, interlaced: false)

    func testWellFormedPNGsOfEveryLayoutAreAccepted() {
        let layouts: [(UInt8, UInt8)] = [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (2, 8), (2, 16), (3, 1), (3, 4), (3, 8),
                                         (4, 8), (4, 16), (6, 8), (6, 16)]
        for (colorType, depth) in layouts {
            for interlaced in [false, true] {
                for (width, height) in [(1, 1), (5, 3), (9, 17)] {
                    let image = ImageEncoders.png(width: width, height: height, bitDepth: depth, colorType: colorType,
                                                  interlaced: interlaced)
                    XCTAssertNil(PNGCheck.problem(image), "type \(colorType) depth \(depth) \(width)x\(height) interlaced \(interlaced)")
                }
            }
        }
        accepts(ImageEncoders.png(width: 40, height: 30, split: 7), .spriteImage)
        accepts(ImageEncoders.png(width: 256, height: 256), .tile)
        accepts(ImageEncoders.png(width: 64, height: 64, interlaced: true), .image)
    }

    func testTruncatedPNGsAreRefusedWhereverTheyAreCut() {
        let image = ImageEncoders.png(width: 12, height: 9, split: 3)
        for length in stride(from: 0, to: image.count, by: 1) {
            XCTAssertNotNil(PNGCheck.problem(image.prefix(length)), "cut at \(length) of \(image.count)")
        }
        refuses(image.prefix(image.count - 12), .spriteImage, containing: "no IEND chunk")
        refuses(image.prefix(image.count - 20), .spriteImage, containing: "runs past the end (truncated)")
    }

    func testACorruptedByteFailsItsChunkCRC() throws {
        var image = [UInt8](ImageEncoders.png())
        let idat = try XCTUnwrap(image.indices.first { Array(image[$0..<$0 + 4]) == Array("IDAT".utf8) }) - 4
        image[idat + 10] ^= 0x40
        refuses(Data(image), .spriteImage, containing: "PNG chunk IDAT at byte \(idat): CRC mismatch")
        var header = [UInt8](ImageEncoders.png())
        header[8 + 8 + 12] ^= 0x01  // the last byte of IHDR's CRC
        refuses(Data(header), .spriteImage, containing: "PNG chunk IHDR at byte 8: CRC mismatch")
    }

    func testImageDataMustInflateToExactlyTheSizeIHDRImplies() throws {
        XCTAssertNil(PNGCheck.problem(png([ihdr(), ("IDAT", try zlib(raw5x3)), ("IEND", [])])))
        // Not a zlib stream at all (valid CRC).
        refuses(png([ihdr(), ("IDAT", [0x12, 0x34, 0x56, 0x78, 0x9a]), ("IEND", [])]), .spriteImage, containing: "does not inflate")
        // A row short, a row too many, and a zlib stream cut before its end.
        refuses(png([ihdr(), ("IDAT", try zlib(Array(raw5x3.dropLast(21)))), ("IEND", [])]), .spriteImage,
                containing: "inflates to 42 bytes, IHDR implies 63")
        refuses(png([ihdr(), ("IDAT", try zlib(raw5x3 + raw5x3.prefix(21))), ("IEND", [])]), .spriteImage,
                containing: "beyond the 63 bytes")
        refuses(png([ihdr(), ("IDAT", Array(try zlib(raw5x3).dropLast(6))), ("IEND", [])]), .spriteImage,
                containing: "ends inside its zlib stream")
        // Interlaced, 5x3 RGBA needs the passes' rows: 5 + 5 + 5 + 13 + 2 * 9 + 21 = 67 bytes, not 63.
        let zeros = [UInt8](repeating: 0, count: 63)
        XCTAssertNil(PNGCheck.problem(png([ihdr(), ("IDAT", try zlib(zeros)), ("IEND", [])])))
        refuses(png([ihdr(interlace: 1), ("IDAT", try zlib(zeros)), ("IEND", [])]), .spriteImage,
                containing: "inflates to 63 bytes, IHDR implies 67")
        XCTAssertNil(PNGCheck.problem(png([ihdr(interlace: 1), ("IDAT", try zlib(zeros + [0, 0, 0, 0])), ("IEND", [])])))
        // A filter type past 4.
        var badFilter = raw5x3
        badFilter[21] = 5
        refuses(png([ihdr(), ("IDAT", try zlib(badFilter)), ("IEND", [])]), .spriteImage, containing: "filter type 5 at row 1")
    }

    func testChunkOrderAndHeaderFieldsAreChecked() throws {
        let data = ("IDAT", try zlib(raw5x3))
        refuses(png([("tEXt", Array("a\u{0}b".utf8)), ihdr(), data, ("IEND", [])]), .spriteImage, containing: "first chunk must be IHDR")
        refuses(png([ihdr(depth: 3), data, ("IEND", [])]), .spriteImage, containing: "bit depth 3 with colour type 6")
        refuses(png([ihdr(colorType: 5), data, ("IEND", [])]), .spriteImage, containing: "colour type 5")
        refuses(png([ihdr(width: 0), data, ("IEND", [])]), .spriteImage, containing: "size 0x3")
        refuses(png([ihdr(interlace: 2), data, ("IEND", [])]), .spriteImage, containing: "interlace 2")
        refuses(png([ihdr(), ihdr(), data, ("IEND", [])]), .spriteImage, containing: "a second IHDR")
        refuses(png([ihdr(), ("IEND", [])]), .spriteImage, containing: "no IDAT")
        refuses(png([ihdr(), data, ("IEND", []), ("tEXt", [1])]), .spriteImage, containing: "bytes after IEND")
        refuses(png([ihdr(), ("ABCD", [1]), data, ("IEND", [])]), .spriteImage, containing: "unknown critical chunk")
        refuses(png([ihdr(), data, ("tIME", [0, 0, 0, 0, 0, 0, 0]), data, ("IEND", [])]), .spriteImage, containing: "not consecutive")
        let palette = ImageEncoders.rawImageData(width: 5, height: 3, bitsPerPixel: 8, interlaced: false)
        refuses(png([ihdr(colorType: 3), ("IDAT", try zlib(palette)), ("IEND", [])]), .spriteImage, containing: "without PLTE")
        XCTAssertNil(PNGCheck.problem(png([ihdr(colorType: 3), ("PLTE", [1, 2, 3]), ("IDAT", try zlib(palette)), ("IEND", [])])))
        refuses(png([ihdr(colorType: 3), ("PLTE", [1, 2]), ("IDAT", try zlib(palette)), ("IEND", [])]), .spriteImage,
                containing: "not a palette")
    }

    func testADamagedRasterTileIsRefused() {
        let tile = ImageEncoders.png(width: 256, height: 256)
        refuses(tile.prefix(tile.count / 2), .tile, containing: "PNG")
    }
}
