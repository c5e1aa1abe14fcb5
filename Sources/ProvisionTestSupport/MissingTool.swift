import Foundation

/// A tool a test checks provision against is not installed: thrown, the test fails naming it.
///
/// `.ci/setup` (run by `.ci/test`, the README's test command) installs every such tool, so a
/// missing one is a broken set-up to fix, never a reason to skip: a skipped oracle test looks like a
/// green one.
public struct MissingTool: Error, CustomStringConvertible {
    /// What is missing, and the Debian package or step that brings it.
    public var description: String

    /// `tool`: what is missing; `package`: where `.ci/setup` gets it.
    public init(_ tool: String, package: String) {
        description = "\(tool) is not installed: run .ci/setup (it installs \(package))"
    }
}
