/// Splits a script of SQL statements at the `;` that end them: not inside string literals
/// (`'a;b'`), quoted identifiers, dollar-quoted bodies (`$$ … ; … $$`, `$fn$ … $fn$`) or
/// comments. For engines whose protocol runs one statement at a time (PostgreSQL's extended
/// query protocol).
///
/// ```swift
/// SQLScript.statements("CREATE TABLE t (a text DEFAULT 'x;y'); INSERT INTO t DEFAULT VALUES")
/// // ["CREATE TABLE t (a text DEFAULT 'x;y')", "INSERT INTO t DEFAULT VALUES"]
/// ```
public enum SQLScript {
    /// The statements of `script`, trimmed, empty ones left out.
    public static func statements(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let text = String(current).trimmingWhitespace()
            if !text.isEmpty { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        func copy(through end: Int) {
            let last = min(end, characters.count - 1)
            if index <= last { current.append(contentsOf: characters[index...last]) }
            index = last + 1
        }
        func find(_ needle: [Unicode.Scalar], from start: Int) -> Int? {
            guard !needle.isEmpty, start <= characters.count - needle.count else { return nil }
            for position in start...(characters.count - needle.count)
            where characters[position..<(position + needle.count)].elementsEqual(needle) {
                return position
            }
            return nil
        }
        while index < characters.count {
            let scalar = characters[index]
            switch scalar {
            case "'", "\"":
                // A doubled quote inside is an escaped quote: scanning on from it finds the pair.
                var end = index + 1
                while end < characters.count, characters[end] != scalar { end += 1 }
                copy(through: end)
            case "-" where index + 1 < characters.count && characters[index + 1] == "-":
                var end = index
                while end < characters.count, characters[end] != "\n" { end += 1 }
                copy(through: end)
            case "/" where index + 1 < characters.count && characters[index + 1] == "*":
                copy(through: (find(["*", "/"], from: index + 2) ?? characters.count) + 1)
            case "$":
                var end = index + 1
                while end < characters.count,
                    characters[end] == "_" || characters[end].properties.isAlphabetic
                        || ("0"..."9").contains(characters[end])
                {
                    end += 1
                }
                if end < characters.count, characters[end] == "$" {
                    let tag = Array(characters[index...end])
                    let close = find(tag, from: end + 1)
                    copy(through: close.map { $0 + tag.count - 1 } ?? characters.count)
                } else {
                    copy(through: index)  // a parameter such as $1
                }
            case ";":
                index += 1
                flush()
            default:
                current.append(scalar)
                index += 1
            }
        }
        flush()
        return statements
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
