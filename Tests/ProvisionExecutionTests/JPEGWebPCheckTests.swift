import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// JPEG and WebP bodies are checked down to their marker chain and container chunks.
final class JPEGWebPCheckTests: XCTestCase {
    func testBaselineAndProgressiveJPEGsAreAccepted() {
        accepts(ImageEncoders.jpeg(), .spriteImage)
        accepts(ImageEncoders.jpeg(progressive: true), .tile)
        accepts(ImageEncoders.jpeg(width: 512, height: 512), .image)
    }

    func testAJPEGCutAnywhereIsRefused() {
        for image in [ImageEncoders.jpeg(), ImageEncoders.jpeg(progressive: true)] {
            for length in 0..<image.count {
                XCTAssertNotNil(JPEGCheck.problem(image.prefix(length)), "cut at \(length) of \(image.count)")
            }
        }
        let image = ImageEncoders.jpeg()
        refuses(image.dropLast(2), .spriteImage, containing: "no EOI marker")
        refuses(image.prefix(30), .spriteImage, containing: "runs past the end (truncated)")
    }

    /// Replaces the segment of `marker` in a generated JPEG.
    private func jpeg(replacing marker: UInt8, with segment: [UInt8]?) -> Data {
        var bytes = [UInt8](ImageEncoders.jpeg())
        guard let at = bytes.indices.dropLast().first(where: { bytes[$0] == 0xff && bytes[$0 + 1] == marker }) else { return Data() }
        let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        bytes.replaceSubrange(at..<at + 2 + length, with: segment ?? [])
        return Data(bytes)
    }

    func testTheMarkerChainIsChecked() {
        refuses(jpeg(replacing: 0xc0, with: nil), .spriteImage, containing: "scan before any frame header (SOF)")
        refuses(jpeg(replacing: 0xc0, with: [0xff, 0xc0, 0, 11, 8, 0, 0, 0, 16, 1, 1, 0x11, 0]), .spriteImage,
                containing: "frame of 16x0")
        refuses(jpeg(replacing: 0xc0, with: [0xff, 0xc0, 0, 14, 8, 0, 8, 0, 16, 3, 1, 0x11, 0, 2, 0x11, 0]), .spriteImage,
                containing: "does not fit 3 components")
        refuses(jpeg(replacing: 0xe0, with: [0xff, 0xe0, 0, 1]), .spriteImage, containing: "segment length 1")
        refuses(jpeg(replacing: 0xda, with: [0xff, 0xda, 0, 8, 2, 1, 0, 0, 63, 0]), .spriteImage, containing: "malformed scan header")
        refuses(jpeg(replacing: 0xe0, with: [0xff, 0xd8]), .spriteImage, containing: "a second SOI")
        refuses(ImageEncoders.jpeg() + Data([0, 0]), .spriteImage, containing: "2 bytes after EOI")
        refuses(Data([0xff, 0xd8, 0xff, 0xd9]), .spriteImage, containing: "EOI before any scan")
        refuses(Data([0xff, 0xd8, 0xff, 0xe0, 0, 4, 1, 2, 0x00, 0x10]), .spriteImage, containing: "JPEG at byte 8: expected a marker")
    }

    func testLossyLosslessAndExtendedWebPsAreAccepted() {
        accepts(ImageEncoders.webp([("VP8 ", ImageEncoders.vp8())]), .spriteImage)
        accepts(ImageEncoders.webp([("VP8L", ImageEncoders.vp8l())]), .tile)
        accepts(ImageEncoders.webp([("VP8X", ImageEncoders.vp8x()), ("ALPH", [0, 1, 2]), ("VP8 ", ImageEncoders.vp8()),
                                    ("EXIF", [1, 2, 3, 4])]), .image)
        accepts(ImageEncoders.webp([("VP8X", ImageEncoders.vp8x(flags: 0x02)), ("ANIM", [0, 0, 0, 0, 0, 0]),
                                    ("ANMF", [UInt8](repeating: 0, count: 16) + [0x56, 0x50, 0x38, 0x4c, 0, 0, 0, 0])]), .image)
    }

    func testAWebPCutAnywhereOrWithAWrongRIFFSizeIsRefused() {
        let image = ImageEncoders.webp([("VP8X", ImageEncoders.vp8x()), ("VP8L", ImageEncoders.vp8l())])
        for length in 0..<image.count {
            XCTAssertNotNil(WebPCheck.problem(image.prefix(length)), "cut at \(length) of \(image.count)")
        }
        refuses(image.dropLast(3), .spriteImage, containing: "RIFF size \(image.count - 8) does not match the \(image.count - 11) bytes")
        refuses(image + Data([0, 0]), .spriteImage, containing: "does not match")
    }

    func testChunksAndBitstreamHeadersAreChecked() {
        refuses(ImageEncoders.webp([("ALPH", [1, 2]), ("VP8 ", ImageEncoders.vp8())]), .spriteImage,
                containing: "the first chunk must be VP8, VP8L or VP8X")
        refuses(ImageEncoders.webp([("VP8X", ImageEncoders.vp8x()), ("ALPH", [1, 2])]), .spriteImage, containing: "no image data")
        refuses(ImageEncoders.webp([("VP8L", [0x2e] + ImageEncoders.vp8l().dropFirst())]), .spriteImage, containing: "no VP8L signature")
        var noStartCode = ImageEncoders.vp8()
        noStartCode[4] = 0x02
        refuses(ImageEncoders.webp([("VP8 ", noStartCode)]), .spriteImage, containing: "no VP8 start code")
        var interFrame = ImageEncoders.vp8()
        interFrame[0] |= 1
        refuses(ImageEncoders.webp([("VP8 ", interFrame)]), .spriteImage, containing: "not a key frame")
        refuses(ImageEncoders.webp([("VP8 ", ImageEncoders.vp8(width: 0))]), .spriteImage, containing: "frame of 0x16")
        // A chunk claiming more bytes than the body holds, the RIFF size matching the body.
        var overrun = [UInt8](ImageEncoders.webp([("VP8L", ImageEncoders.vp8l())]))
        overrun[16] = 200
        refuses(Data(overrun), .spriteImage, containing: "size 200 runs past the end")
    }
}
