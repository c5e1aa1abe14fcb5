/// "Did you mean" suggestions for misspelled keys and ids.
public enum Suggestions {
    /// The Levenshtein edit distance between two strings, counted in Unicode scalars.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let s = Array(a.unicodeScalars)
        let t = Array(b.unicodeScalars)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        var previous = Array(0...t.count)
        var current = [Int](repeating: 0, count: t.count + 1)
        for i in 1...s.count {
            current[0] = i
            for j in 1...t.count {
                let substitution = previous[j - 1] + (s[i - 1] == t[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[t.count]
    }

    /// The candidate closest to `word`, if it is close enough to be a likely misspelling.
    ///
    /// Why these thresholds: a candidate is offered when the case-insensitive edit distance
    /// is at most a third of the candidate's length (at least 1, at most 3), so `zooom`
    /// suggests `zoom` but `id` never suggests `name`. Ties go to the earlier candidate,
    /// so results are deterministic. Two words that agree on all but the last character of the
    /// shorter one (which has at least 3 characters) also count as a near miss, so `retry`
    /// suggests `retries` and `meta` suggests `metadata`.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let other = candidate.lowercased()
            let shorter = min(lowered.count, other.count)
            let common = zip(lowered, other).prefix { $0 == $1 }.count
            let distance = shorter >= 3 && common >= shorter - 1 ? 1 : editDistance(lowered, other)
            let limit = max(1, min(3, candidate.count / 3))
            guard distance <= limit else { continue }
            if best == nil || distance < best?.distance ?? Int.max {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// `; did you mean "x"?` for the closest candidate, or an empty string.
    public static func didYouMean(_ word: String, among candidates: [String]) -> String {
        guard let suggestion = closest(to: word, among: candidates) else { return "" }
        return "; did you mean \"\(suggestion)\"?"
    }
}
