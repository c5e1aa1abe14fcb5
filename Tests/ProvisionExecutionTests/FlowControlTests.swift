import Foundation
import ProvisionModel
import XCTest
@testable import ProvisionExecution

/// Retry timing, the token bucket, host keys and URL redaction, without the network.
final class FlowControlTests: XCTestCase {
    func testRetryAfterReadsSecondsAndHTTPDates() {
        let now: Int64 = 1_445_412_480  // Wed, 21 Oct 2015 07:28:00 GMT
        XCTAssertEqual(RetryPolicy.retryAfter("120", now: now), 120)
        XCTAssertEqual(RetryPolicy.retryAfter(" 0 ", now: now), 0)
        XCTAssertEqual(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now: now), 30)
        XCTAssertEqual(RetryPolicy.retryAfter("Wednesday, 21-Oct-15 07:29:00 GMT", now: now), 60)
        XCTAssertEqual(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now: now), 0, "a past date means now")
        XCTAssertNil(RetryPolicy.retryAfter("soon", now: now))
        XCTAssertNil(RetryPolicy.retryAfter("-5", now: now))
        XCTAssertNil(RetryPolicy.retryAfter("", now: now))
    }

    func testBackoffIsFullJitterUnderAnExponentialCap() {
        let low = RetryPolicy(retries: 5, baseDelay: 0.5, maxDelay: 30, random: { 0 })
        let high = RetryPolicy(retries: 5, baseDelay: 0.5, maxDelay: 30, random: { 0.999_999 })
        let half = RetryPolicy(retries: 5, baseDelay: 0.5, maxDelay: 30, random: { 0.5 })
        for attempt in 1...8 {
            let cap = min(30, 0.5 * pow(2, Double(attempt - 1)))
            XCTAssertEqual(low.delay(afterAttempt: attempt), 0, "full jitter starts at 0")
            XCTAssertEqual(high.delay(afterAttempt: attempt), cap, accuracy: 1e-4, "attempt \(attempt)")
            XCTAssertEqual(half.delay(afterAttempt: attempt), cap / 2, accuracy: 1e-9)
        }
    }

    func testRetryAfterIsHonouredUpToItsCap() {
        let policy = RetryPolicy(retries: 3, baseDelay: 0.5, maxDelay: 30, random: { 0.5 })
        XCTAssertEqual(policy.delay(afterAttempt: 1, retryAfter: 10), 10, "longer than the backoff: the server wins")
        XCTAssertEqual(policy.delay(afterAttempt: 1, retryAfter: 0), 0.25, "shorter: the backoff stays")
        XCTAssertEqual(policy.delay(afterAttempt: 1, retryAfter: 90), 90, "beyond maxDelay but under the cap")
        XCTAssertEqual(policy.delay(afterAttempt: 1, retryAfter: 86_400), RetryPolicy.defaultMaxRetryAfter)
        let strict = RetryPolicy(retries: 3, maxRetryAfter: 5, random: { 0 })
        XCTAssertEqual(strict.delay(afterAttempt: 1, retryAfter: 60), 5)
    }

    func testPermanentFailuresAreNotRetriedAndRefusalsAreFatal() {
        let policy = RetryPolicy(retries: 3)
        for code in [400, 401, 403, 404, 410] { XCTAssertFalse(policy.shouldRetry(.status(code), attempt: 1), "\(code)") }
        for code in [408, 429, 500, 502, 503, 504] { XCTAssertTrue(policy.shouldRetry(.status(code), attempt: 1), "\(code)") }
        XCTAssertFalse(policy.shouldRetry(.status(503), attempt: 4), "attempts are capped")
        XCTAssertFalse(policy.shouldRetry(.refused(401), attempt: 1))
        XCTAssertTrue(FetchFailure.refused(401).isFatal, "a refused key dooms every request carrying it")
        XCTAssertTrue(FetchFailure.refused(403).isFatal)
        XCTAssertFalse(FetchFailure.status(401).isFatal, "a 401 to a request without a key fails that URL only")
        XCTAssertFalse(FetchFailure.status(403).isFatal)
        XCTAssertFalse(FetchFailure.status(404).isFatal)
        XCTAssertFalse(FetchFailure.notFound.isFatal)
        XCTAssertEqual(FetchFailure.refused(401).description,
                       "the access token was refused (HTTP 401): it is wrong, expired or not allowed for this URL")
        XCTAssertEqual(FetchFailure.status(403).description, "HTTP 403 (the request carried no key or token)")
        XCTAssertEqual(FetchFailure.status(500).description, "HTTP 500")
    }

    func testTokenBucketSpacesStartsAtTheRate() {
        var bucket = RateLimiter(rate: 10)
        let t0: UInt64 = 1_000_000_000
        XCTAssertTrue(bucket.take(now: t0), "starts full")
        XCTAssertFalse(bucket.take(now: t0))
        XCTAssertFalse(bucket.take(now: t0 + 50_000_000), "half a token after 50 ms")
        XCTAssertEqual(bucket.wait(now: t0 + 50_000_000), 50_000_000, accuracy: 1000)
        XCTAssertTrue(bucket.take(now: t0 + 100_000_000))
        // A long idle period does not bank more than the burst.
        XCTAssertTrue(bucket.take(now: t0 + 10_000_000_000))
        XCTAssertFalse(bucket.take(now: t0 + 10_000_000_000))
        // Over a simulated second of polling every millisecond, at most 1 + rate starts.
        var started = 0
        var polling = RateLimiter(rate: 25)
        for ms in 0...1000 where polling.take(now: t0 + UInt64(ms) * 1_000_000) { started += 1 }
        XCTAssertEqual(started, 26)
        var burst = RateLimiter(rate: 1, burst: 3)
        XCTAssertEqual((0..<5).filter { _ in burst.take(now: t0) }.count, 3)
    }

    func testHostKeysIncludeThePort() {
        XCTAssertEqual(HTTPFetcher.hostKey("https://Tiles.Example.com/a/b.pbf?x=1"), "tiles.example.com:443")
        XCTAssertEqual(HTTPFetcher.hostKey("http://127.0.0.1:8080/x"), "127.0.0.1:8080")
        XCTAssertEqual(HTTPFetcher.hostKey("http://user:pw@a.example"), "a.example:80")
        XCTAssertEqual(HTTPFetcher.hostKey("https://[::1]/x"), "[::1]:443")
        XCTAssertEqual(HTTPFetcher.hostKey("https://[::1]:9/x"), "[::1]:9")
    }

    func testTheByteWiseHostKeyAgreesWithTheStringOne() {
        let urls = [
            "https://Tiles.Example.com/a/b.pbf?x=1", "HTTPS://A.B:8443", "http://a.b?q=1", "http://a.b#frag",
            "https://user@host.example/x", "https://u:p@[2001:db8::1]:8080/x", "https://[::1]", "http://host:",
            "ftp://x.example/y", "https:/x", "no-scheme.example/x", "", "https://", "https://@/", "httpS://a@b@c:1/d",
            "https://a.example/ü", "https://ex\u{e4}mple.com/x", "https://x.example:/y", "Https://x.example/?y=://z",
        ]
        for url in urls {
            let unicode = HTTPFetcher.unicodeHostKey(url)
            if let ascii = HTTPFetcher.asciiHostKey(url) { XCTAssertEqual(ascii, unicode, url) }
            XCTAssertEqual(HTTPFetcher.hostKey(url), unicode, url)
        }
        XCTAssertNil(HTTPFetcher.asciiHostKey("https://ex\u{e4}mple.com/x"), "a non-ASCII host takes the string path")
        XCTAssertNotNil(HTTPFetcher.asciiHostKey("https://a.example/ü"), "non-ASCII past the authority does not matter")
    }
}
