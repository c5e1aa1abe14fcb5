@testable import ProvisionPlanning
import XCTest

final class URLTemplateTests: XCTestCase {
    /// RFC 3986 §5.4.1 and §5.4.2: every normal and abnormal example, against `http://a/b/c/d;p?q`.
    func testResolveFollowsRFC3986Examples() {
        let base = "http://a/b/c/d;p?q"
        let cases: [(String, String)] = [
            ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
            ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
            ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
            ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
        ]
        for (reference, expected) in cases {
            XCTAssertEqual(URLTemplate.resolve(reference, against: base), expected, reference)
        }
    }

    /// Resolution works on the text: braces, `${VAR}` and percent signs are neither encoded nor decoded.
    func testResolveKeepsTemplateTextVerbatim() {
        XCTAssertEqual(URLTemplate.resolve("{z}/{x}/{y}.pbf?key=${KEY}&a=%7B", against: "https://h/t/v3"),
                       "https://h/t/{z}/{x}/{y}.pbf?key=${KEY}&a=%7B")
        XCTAssertEqual(URLTemplate.resolve("../{prefix}/{quadkey}", against: "https://h/a/b/c.json"), "https://h/a/{prefix}/{quadkey}")
        XCTAssertEqual(URLTemplate.resolve("{z}/{x}/{y}", against: "https://h"), "https://h/{z}/{x}/{y}")
    }

    func testReplaceTokensLeavesUnknownTokensLiterally() {
        let lookup: (String) -> String? = { $0 == "name" ? "14th St NW" : nil }
        XCTAssertEqual(URLTemplate.replaceTokens("literal", lookup), "literal")
        XCTAssertEqual(URLTemplate.replaceTokens("{name}", lookup), "14th St NW")
        XCTAssertEqual(URLTemplate.replaceTokens("{text}", lookup), "{text}")
        XCTAssertEqual(URLTemplate.replaceTokens("a{name}b{name}c", lookup), "a14th St NWb14th St NWc")
        XCTAssertEqual(URLTemplate.replaceTokens("{name", lookup), "{name")
        XCTAssertEqual(URLTemplate.replaceTokens("}{{name}}", lookup), "}{14th St NW}")
        XCTAssertEqual(URLTemplate.replaceTokens("{}", lookup), "{}")
    }

    func testPercentEncode() {
        XCTAssertEqual(URLTemplate.percentEncode("Open Sans Regular,Arial Unicode MS Regular"),
                       "Open%20Sans%20Regular%2cArial%20Unicode%20MS%20Regular")
        XCTAssertEqual(URLTemplate.percentEncode("az-AZ_09.~/?&"), "az-AZ_09.~%2f%3f%26")
        XCTAssertEqual(URLTemplate.percentEncode("é"), "%c3%a9")
    }
}
