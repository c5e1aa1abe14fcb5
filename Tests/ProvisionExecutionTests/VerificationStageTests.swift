import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// The thread that checks bodies beside the transfer loop: every body gets one verdict, in the
/// order handed over, with its cache fields; the loop is woken once per batch of verdicts.
final class VerificationStageTests: XCTestCase {
    private func job(_ index: Int, body: Data, lastModified: String? = "Tue, 15 Nov 1994 08:12:31 GMT") -> VerificationStage.Job {
        let url = "https://tiles.example.com/\(index).pbf"
        let pending = FetchLoop.Pending(transport: TransportRequest(request: FetchRequest(url: url, kind: .tile), url: url),
                                        host: "tiles.example.com:443", attempt: 1, due: 0)
        let headers = CurlTransfer.CacheHeaders(etag: "\"\(index)\"", lastModified: lastModified,
                                                cacheControl: ["max-age=60"], expires: nil,
                                                date: "Tue, 15 Nov 1994 08:12:\(String(format: "%02d", index % 60)) GMT",
                                                buildTime: 1_000)
        return VerificationStage.Job(pending: pending, data: body, headers: headers, contentType: nil)
    }

    func testEveryBodyGetsOneVerdictInOrderAndTheLoopIsWokenOnceForABatch() {
        let wakes = Mutex(0)
        let stage = VerificationStage(verifier: Verifier()) { wakes.withLock { $0 += 1 } }
        let html = Data("<html>busy</html>".utf8)
        let jobs = (0..<100).map { job($0, body: $0 % 4 == 1 ? html : Fixtures.tile(layers: ["water"], seed: $0)) }
        stage.submit(Array(jobs[..<50]))
        stage.submit(Array(jobs[50...]))
        stage.close()  // waits until every queued body is checked

        let verdicts = stage.takeVerdicts()
        XCTAssertEqual(verdicts.map(\.pending.request.url), jobs.map(\.pending.request.url))
        for (index, verdict) in verdicts.enumerated() {
            switch verdict.result {
            case .success(let body):
                XCTAssertNotEqual(index % 4, 1)
                XCTAssertEqual(body.data, Fixtures.tile(layers: ["water"], seed: index))
                XCTAssertEqual(body.etag, "\"\(index)\"")
                XCTAssertEqual(body.modified, 784_887_151)
                XCTAssertEqual(body.expires, 1_060, "the build time plus max-age, whatever the Date")
            case .failure(let failure):
                XCTAssertEqual(index % 4, 1, "\(failure)")
                guard case .invalidBody(let why) = failure else { return XCTFail("\(failure)") }
                XCTAssertTrue(why.contains("HTML"), why)
            }
        }
        XCTAssertEqual(wakes.read { $0 }, 1, "one wake for verdicts nobody had collected yet, not one per verdict")
        XCTAssertTrue(stage.takeVerdicts().isEmpty)
    }

    func testWaitingForVerdictsReturnsThemAsTheyComeAndAStageNeverUsedClosesAtOnce() {
        VerificationStage(verifier: Verifier()) {}.close()
        let stage = VerificationStage(verifier: Verifier()) {}
        var collected: [VerificationStage.Verdict] = []
        for round in 0..<5 {
            stage.submit((0..<3).map { job(round * 3 + $0, body: Fixtures.tile(layers: ["a"]), lastModified: nil) })
            while collected.count < (round + 1) * 3 { collected += stage.waitForVerdicts() }
        }
        stage.close()
        XCTAssertEqual(collected.map(\.pending.request.url), (0..<15).map { "https://tiles.example.com/\($0).pbf" })
        XCTAssertTrue(collected.allSatisfy { verdict in
            guard case .success(let body) = verdict.result else { return false }
            return body.modified == nil
        })
    }
}
