import ProvisionModel
import ProvisionPlanning
import TileMath
import XCTest

/// The keys a job's requests carry: checked before any request, kept out of canonical URLs.
final class CredentialsTests: XCTestCase {
    private func job(styles: [String], tilesets: [String] = []) -> Job {
        var job = Job(name: "t", stylePacks: styles.enumerated().map { StylePack(id: "p\($0.offset)", style: $0.element) },
                      regions: [])
        if !tilesets.isEmpty {
            job.regions = [Region(id: "r", name: "R", area: .bbox(BoundingBox(west: 0, south: 0, east: 1, north: 1)),
                                  minZoom: 0, maxZoom: 1, stylePacks: [], tilesets: tilesets)]
        }
        return job
    }

    func testTheMapboxTokenComesFromTheEnvironmentOrTheVariableTheStyleURLNames() throws {
        let plain = try Credentials.resolve(job: job(styles: ["mapbox://styles/u/s"]), environment: ["MAPBOX_ACCESS_TOKEN": "pk.A"])
        XCTAssertEqual(plain.requestURL("mapbox://styles/u/s"), "https://api.mapbox.com/styles/v1/u/s?access_token=pk.A")
        let named = try Credentials.resolve(job: job(styles: ["mapbox://styles/u/s?access_token=${MY_TOKEN}"]),
                                            environment: ["MY_TOKEN": "pk.B"])
        XCTAssertEqual(named.mapboxVariable, "MY_TOKEN")
        XCTAssertEqual(named.canonical(job(styles: ["mapbox://styles/u/s?access_token=${MY_TOKEN}"])).stylePacks[0].style,
                       "mapbox://styles/u/s")
        XCTAssertEqual(named.requestURL("mapbox://fonts/u/Open%20Sans/0-255.pbf"),
                       "https://api.mapbox.com/fonts/v1/u/Open%20Sans/0-255.pbf?access_token=pk.B")
        XCTAssertEqual(named.secrets.values, ["pk.B"])
    }

    func testMissingOrEmptyCredentialsNameThePackAndTheVariable() {
        XCTAssertThrowsError(try Credentials.resolve(job: job(styles: ["https://a/s.json", "mapbox://styles/u/s"]), environment: [:])) {
            let message = String(describing: $0)
            XCTAssertTrue(message.contains("style pack 'p1' uses mapbox:// URLs"), message)
            XCTAssertTrue(message.contains("export MAPBOX_ACCESS_TOKEN="), message)
        }
        XCTAssertThrowsError(try Credentials.resolve(job: job(styles: ["https://a/s.json?key=${K}"], tilesets: ["https://t/{z}/{x}/{y}.png?k=${K}"]),
                                                     environment: ["K": ""])) {
            XCTAssertEqual(String(describing: $0),
                           "style pack 'p0' and region 'r' name ${K}, which is empty: set it to the key before running (export K=…)")
        }
        let ok = try? Credentials.resolve(job: job(styles: ["https://a/s.json"]), environment: [:])
        XCTAssertNotNil(ok)
        XCTAssertThrowsError(try ok?.check(["https://a/x", "mapbox://mapbox.satellite"], subject: "style pack 'p0'")) {
            XCTAssertTrue(String(describing: $0).hasPrefix("style pack 'p0' uses mapbox:// URLs"))
        }
    }

    func testKeysAreDroppedFromCanonicalURLsAndAddedToRequestsOfTheirOrigin() throws {
        let job = job(styles: ["https://api.maptiler.com/maps/streets-v2/style.json?key=${MAPTILER_KEY}"],
                      tilesets: ["https://api.maptiler.com/tiles/v3/{z}/{x}/{y}.pbf?key=${MAPTILER_KEY}"])
        let credentials = try Credentials.resolve(job: job, environment: ["MAPTILER_KEY": "mt"])
        let canonical = credentials.canonical(job)
        XCTAssertEqual(canonical.stylePacks[0].style, "https://api.maptiler.com/maps/streets-v2/style.json")
        XCTAssertEqual(canonical.regions[0].tilesets, ["https://api.maptiler.com/tiles/v3/{z}/{x}/{y}.pbf"])
        XCTAssertEqual(credentials.requestURL("https://api.maptiler.com/fonts/Roboto%20Regular/0-255.pbf"),
                       "https://api.maptiler.com/fonts/Roboto%20Regular/0-255.pbf?key=mt")
        XCTAssertNil(credentials.requestURL("https://tiles.example.com/a.json"))
    }
}
