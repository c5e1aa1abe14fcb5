/// A phase of an apply, in the order they run (`refresh` and `glyphs` only when the plan has them).
public enum ApplyPhase: String, Sendable {
    case regions, resources, tiles, refresh, glyphs, links
}

/// What an `Applier` tells as it runs. Every method does nothing unless a conformer says
/// otherwise, so an observer implements only what it shows.
public protocol ApplyObserver {
    /// A phase begins.
    func phase(_ phase: ApplyPhase)
    /// Download progress, counted over the whole apply; called on the downloading thread.
    func downloads(_ progress: DownloadProgress)
    /// A download failed for good: its canonical URL and why.
    func failed(url: String, reason: String)
    /// A region's links are written: its key, the tiles linked, the tiles it wants, and whether
    /// it is complete.
    func regionLinked(key: String, linkedTiles: Int, wantedTiles: Int, complete: Bool)
}

extension ApplyObserver {
    public func phase(_ phase: ApplyPhase) {}
    public func downloads(_ progress: DownloadProgress) {}
    public func failed(url: String, reason: String) {}
    public func regionLinked(key: String, linkedTiles: Int, wantedTiles: Int, complete: Bool) {}
}

/// An observer that is told everything and shows nothing: an applier's default.
public struct SilentApplyObserver: ApplyObserver {
    public init() {}
}
