@testable import ProvisionPlanning
import XCTest

final class URLTemplateTests: XCTestCase {
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

    func testExpandEnvironment() {
        let env = ["TOKEN": "sk.123", "A_1": "x"]
        let cases: [(String, String, [String])] = [
            ("https://t/a?access_token=${TOKEN}", "https://t/a?access_token=sk.123", []),
            ("${A_1}${A_1}", "xx", []),
            ("k=${MISSING}&j=${MISSING}&m=${OTHER}", "k=&j=&m=", ["MISSING", "OTHER"]),
            ("$TOKEN ${} ${1X} ${TOKEN", "$TOKEN ${} ${1X} ${TOKEN", []),
            ("{z}/${TOKEN}/{x}", "{z}/sk.123/{x}", []),
        ]
        for (input, output, missing) in cases {
            let result = expandEnvironment(input, env: env)
            XCTAssertEqual(result.0, output, input)
            XCTAssertEqual(result.missing, missing, input)
        }
    }
}
