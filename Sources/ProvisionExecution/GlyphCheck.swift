import Foundation
import ProvisionCodecs

/// The structural check of a glyph range PBF (MapLibre's glyphs.proto).
///
/// The top level is repeated `stacks = 1` (fontstack messages) and nothing else. A fontstack has
/// `name = 1` and `range = 2` (strings) and repeated `glyphs = 3` (glyph messages). A glyph has
/// `id = 1` (varint), `bitmap = 2` (bytes), `width = 3`, `height = 4`, `left = 5`, `top = 6`
/// and `advance = 7` (varints). Known fields of the wrong wire type are refused; unknown fields
/// inside a fontstack or glyph are skipped, as MapLibre's reader does.
enum GlyphCheck {
    /// Why `data` is not a usable glyph PBF, or nil when it is. Empty data is not checked here.
    static func problem(_ data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            var glyphs = ProtobufReader(bytes)
            var stackNumber = 0
            do {
                while let field = try glyphs.nextField() {
                    guard field.number == 1, field.wireType == 2, let stack = field.payload else {
                        return "not a glyph PBF: top-level field \(field.number) (wire type \(field.wireType))"
                    }
                    stackNumber += 1
                    if let problem = try stackProblem(bytes, stack) { return "glyph PBF fontstack \(stackNumber): \(problem)" }
                }
            } catch {
                return "not a glyph PBF: \(error)"
            }
            return nil
        }
    }

    private static func stackProblem(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> String? {
        var stack = ProtobufReader(bytes, range: range)
        var glyphNumber = 0
        while let field = try stack.nextField() {
            switch field.number {
            case 1, 2:
                guard field.wireType == 2 else { return "\(field.number == 1 ? "name" : "range") has wire type \(field.wireType)" }
            case 3:
                guard field.wireType == 2, let glyph = field.payload else { return "glyph has wire type \(field.wireType)" }
                glyphNumber += 1
                var reader = ProtobufReader(bytes, range: glyph)
                while let member = try reader.nextField() {
                    let expected: UInt8? = member.number == 2 ? 2 : (1...7).contains(member.number) ? 0 : nil
                    if let expected, member.wireType != expected {
                        return "glyph \(glyphNumber) field \(member.number) has wire type \(member.wireType)"
                    }
                }
            default:
                continue
            }
        }
        return nil
    }
}
