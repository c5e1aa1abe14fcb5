import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionTestSupport

/// Provider-shaped hosts on the loopback server, laid out as the real APIs lay out their URLs,
/// with fixture documents written from each provider's documented formats
/// (Tests/Fixtures/providers). Each is mounted under its own prefix, which a job maps its real
/// base URL to with `origins`:
///
/// | prefix | stands for | needs |
/// |---|---|---|
/// | `/mapbox/` | `https://api.mapbox.com/` (styles/v1, fonts/v1, v4 TileJSON and tiles) | `access_token` = `mapboxToken`, else 401 |
/// | `/maptiler/` | `https://api.maptiler.com/` (maps, fonts, tiles/v3) | `key` = `maptilerKey`, else 403 |
/// | `/openfreemap/` | `https://tiles.openfreemap.org/` (styles, extension-less TileJSON, natural earth raster) | nothing |
/// | `/osm/` | `https://tile.openstreetmap.org/` (raster XYZ PNG) | nothing |
/// | `/elevation/` | `https://elevation.example.org/` (terrarium PNG) | nothing |
///
/// Documents echo the caller's key into the URLs they return, as the real hosts do.
enum ProviderHost {
    static let mapboxToken = "pk.eyJ1IjoiFIXTURE.TOKEN-5c1b2a"
    static let maptilerKey = "FIXTUREmaptilerKEY77"
    static let secrets = [mapboxToken, maptilerKey]
    static let fixtures = Demo.repositoryRoot.appendingPathComponent("Tests/Fixtures/providers")

    /// The job origins that send every provider's real base URL to its prefix on `server`.
    static func origins(_ server: LoopbackHTTPServer) -> [(String, JSONValue)] {
        [("https://api.mapbox.com/", .string(server.baseURL + "/mapbox/")),
         ("https://api.maptiler.com/", .string(server.baseURL + "/maptiler/")),
         ("https://tiles.openfreemap.org/", .string(server.baseURL + "/openfreemap/")),
         ("https://tile.openstreetmap.org/", .string(server.baseURL + "/osm/")),
         ("https://elevation.example.org/", .string(server.baseURL + "/elevation/")),
         ("https://styles.example.org/terrain/", .string(fixtures.appendingPathComponent("terrain").path)),
         ("https://styles.example.org/raster/", .string(fixtures.appendingPathComponent("raster").path))]
    }

    /// Mounts every provider on `server`; vector tiles answer with `tile`, raster ones with a PNG.
    static func install(on server: LoopbackHTTPServer, tile: Data) {
        let png = FixturePNG.solid(width: 256, height: 256, rgb: (0x80, 0xa0, 0xc0))
        /// The demo font's range named by the last segment of `path` (a glyph range must be the one asked for).
        @Sendable func glyphs(_ path: String) -> Data {
            let range = path.split(separator: "/").last ?? ""
            return (try? Data(contentsOf: Demo.directory.appendingPathComponent("fonts/Noto Sans Regular/\(range)"))) ?? Data()
        }
        @Sendable func sprite(_ file: String) -> Data {
            (try? Data(contentsOf: Demo.directory.appendingPathComponent("sprites/" + file))) ?? Data()
        }
        @Sendable func document(_ name: String) -> Data {
            let text = (try? String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)) ?? ""
            return Data(text.replacingOccurrences(of: "{{TOKEN}}", with: mapboxToken)
                .replacingOccurrences(of: "{{KEY}}", with: maptilerKey).utf8)
        }
        @Sendable func ok(_ body: Data, _ type: String) -> LoopbackHTTPServer.Behaviour {
            .respond(status: 200, headers: [.init("Content-Type", type)], body: body)
        }
        let json = "application/json"
        @Sendable func spriteFile(_ path: String) -> LoopbackHTTPServer.Behaviour? {
            for name in ["sprite@2x.png", "sprite.png", "sprite@2x.json", "sprite.json", "ofm@2x.png", "ofm.png", "ofm@2x.json", "ofm.json"]
            where path.hasSuffix("/" + name) {
                let file = name.replacingOccurrences(of: "sprite", with: "streets").replacingOccurrences(of: "ofm", with: "streets")
                return ok(sprite(file), name.hasSuffix(".png") ? "image/png" : json)
            }
            return nil
        }
        @Sendable func isTile(_ path: String, _ suffix: String) -> Bool {
            let parts = path.split(separator: "/")
            guard parts.count >= 3, path.hasSuffix(suffix) else { return false }
            let last = parts[parts.count - 1].dropLast(suffix.count)
            return [parts[parts.count - 3], parts[parts.count - 2], last].allSatisfy { Int($0) != nil }
        }

        server.setHandler(prefix: "/mapbox/") { request in
            guard request.target.contains("access_token=\(mapboxToken)") else {
                return .respond(status: 401, headers: [.init("Content-Type", json)],
                                body: Data(#"{"message":"Not Authorized - Invalid Token"}"#.utf8))
            }
            let path = request.path
            if path == "/mapbox/styles/v1/provision-test/streets-v12" { return ok(document("mapbox/style.json"), json) }
            if path.hasPrefix("/mapbox/styles/v1/provision-test/streets-v12/") { return spriteFile(path) }
            if path.hasPrefix("/mapbox/fonts/v1/provision-test/") && path.hasSuffix(".pbf") {
                return ok(glyphs(path), "application/x-protobuf")
            }
            if path == "/mapbox/v4/mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2.json" {
                return ok(document("mapbox/tilejson.json"), json)
            }
            if path.hasPrefix("/mapbox/v4/mapbox.mapbox-streets-v8,mapbox.mapbox-terrain-v2/"),
               isTile(path, ".vector.pbf") { return ok(tile, "application/vnd.mapbox-vector-tile") }
            return .respond(status: 404, headers: [], body: Data(#"{"message":"Not Found"}"#.utf8))
        }
        server.setHandler(prefix: "/maptiler/") { request in
            guard request.target.contains("key=\(maptilerKey)") else {
                return .respond(status: 403, headers: [.init("Content-Type", json)], body: Data(#"{"message":"Invalid key"}"#.utf8))
            }
            let path = request.path
            if path == "/maptiler/maps/streets-v2/style.json" { return ok(document("maptiler/style.json"), json) }
            if path.hasPrefix("/maptiler/maps/streets-v2/") { return spriteFile(path) }
            if path.hasPrefix("/maptiler/fonts/") && path.hasSuffix(".pbf") { return ok(glyphs(path), "application/x-protobuf") }
            if path == "/maptiler/tiles/v3/tiles.json" { return ok(document("maptiler/tilejson.json"), json) }
            if path.hasPrefix("/maptiler/tiles/v3/"), isTile(path, ".pbf") { return ok(tile, "application/x-protobuf") }
            return nil
        }
        server.setHandler(prefix: "/openfreemap/") { request in
            let path = request.path
            if path == "/openfreemap/styles/liberty" { return ok(document("openfreemap/style.json"), json) }
            if path == "/openfreemap/planet" { return ok(document("openfreemap/tilejson.json"), json) }
            if path.hasPrefix("/openfreemap/planet/20261101_001001_pt/"), isTile(path, ".pbf") {
                return ok(tile, "application/x-protobuf")
            }
            if path.hasPrefix("/openfreemap/natural_earth/ne2sr/"), isTile(path, ".png") { return ok(png, "image/png") }
            if path.hasPrefix("/openfreemap/sprites/ofm_f384/") { return spriteFile(path) }
            if path.hasPrefix("/openfreemap/fonts/") && path.hasSuffix(".pbf") { return ok(glyphs(path), "application/x-protobuf") }
            return nil
        }
        server.setHandler(prefix: "/osm/") { request in isTile(request.path, ".png") ? ok(png, "image/png") : nil }
        server.setHandler(prefix: "/elevation/terrarium/") { request in isTile(request.path, ".png") ? ok(png, "image/png") : nil }
    }
}

/// A valid PNG of one colour: IHDR, one IDAT of stored (uncompressed) deflate blocks, IEND,
/// every chunk with its CRC.
enum FixturePNG {
    static func solid(width: Int, height: Int, rgb: (UInt8, UInt8, UInt8)) -> Data {
        var raw = [UInt8]()
        raw.reserveCapacity(height * (1 + width * 3))
        for _ in 0..<height {
            raw.append(0)
            for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, raw.count - offset)
            let last: UInt8 = offset + count == raw.count ? 1 : 0
            zlib += [last, UInt8(count & 0xff), UInt8(count >> 8), UInt8(~count & 0xff), UInt8((~count >> 8) & 0xff)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        zlib += bigEndian((b << 16) | a)

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            let body = Array(type.utf8) + data
            png += bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        chunk("IDAT", zlib)
        chunk("IEND", [])
        return Data(png)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
