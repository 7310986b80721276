import Depot

/// A SQLite `CREATE TABLE` statement as the database stores it (`sqlite_schema.sql`), taken apart
/// just enough to rebuild the table with one column changed and everything else kept: the other
/// columns' definitions, `UNIQUE`, `CHECK`, `COLLATE`, `REFERENCES` and `DEFAULT` clauses (the
/// changed column's too), table constraints and options such as `WITHOUT ROWID`.
///
/// ```swift
/// var definition = try SQLiteTableDefinition(
///     "CREATE TABLE t (id INTEGER PRIMARY KEY, code TEXT NOT NULL DEFAULT 'x' UNIQUE COLLATE NOCASE)")
/// try definition.alter(column: "code", typeName: "INTEGER", notNull: false)
/// definition.sql(named: "\"t#rebuild\"")
/// // CREATE TABLE "t#rebuild" (id INTEGER PRIMARY KEY, code INTEGER DEFAULT 'x' UNIQUE COLLATE NOCASE)
/// ```
package struct SQLiteTableDefinition: Sendable {
    /// The column definitions and table constraints, each as its tokens (spaces and comments kept).
    private var items: [[Token]]
    /// What follows the closing parenthesis (`WITHOUT ROWID`, `STRICT`).
    private let trailer: String
    private let table: String

    /// Parses `sql`, the stored `CREATE TABLE` of `table`.
    ///
    /// - Throws: `DepotError` of kind `.migration` when `sql` is not a `CREATE TABLE … (…)`
    ///   statement (a table created with `AS SELECT`).
    package init(_ sql: String, table: String = "") throws {
        self.table = table
        let tokens = Self.tokenize(sql)
        guard let open = tokens.firstIndex(where: { $0.text == "(" }) else {
            throw DepotError(
                .migration, "cannot rebuild '\(table)': its definition has no column list (\(sql))", table: table)
        }
        var items: [[Token]] = [[]]
        var depth = 0
        var index = open + 1
        var closed = false
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if token.text == "(" {
                depth += 1
            } else if token.text == ")" {
                if depth == 0 {
                    closed = true
                    break
                }
                depth -= 1
            } else if token.text == "," && depth == 0 {
                items.append([])
                continue
            }
            items[items.count - 1].append(token)
        }
        guard closed else {
            throw DepotError(
                .migration, "cannot rebuild '\(table)': its definition does not parse (\(sql))", table: table)
        }
        self.items = items
        self.trailer = tokens[index...].map(\.text).joined()
    }

    /// The statement that creates this table under `name` (quoted as it should appear).
    package func sql(named name: String) -> String {
        "CREATE TABLE \(name) (" + items.map(Self.render).joined(separator: ", ") + ")" + trailer
    }

    /// An item's text, runs of spaces (left by a removed clause) as one.
    private static func render(_ item: [Token]) -> String {
        var text = ""
        var afterSpace = false
        for token in item {
            if token.isSpace {
                if !afterSpace { text += token.text }
                afterSpace = true
            } else {
                text += token.text
                afterSpace = false
            }
        }
        return text.trimmed
    }

    /// Gives column `column` the type `typeName` and makes it `NOT NULL` or nullable; every other
    /// clause of its definition stays.
    ///
    /// - Throws: `DepotError` of kind `.migration` when the definition has no such column.
    package mutating func alter(column: String, typeName: String, notNull: Bool) throws {
        guard let position = items.firstIndex(where: { Self.columnName($0) == column }) else {
            throw DepotError(
                .migration, "cannot rebuild '\(table)': its definition has no column '\(column)'", table: table,
                column: column)
        }
        let item = items[position]
        let words = item.indices.filter { !item[$0].isSpace }
        guard let nameIndex = words.first else { return }
        // The type: the words after the name, up to the first constraint (parentheses included).
        var end = nameIndex + 1
        var depth = 0
        var cursor = words.dropFirst().makeIterator()
        while let index = cursor.next() {
            let token = item[index]
            if depth == 0 && Self.constraintWords.contains(token.upper) { break }
            if token.text == "(" { depth += 1 }
            if token.text == ")" { depth -= 1 }
            end = index + 1
        }
        var constraints = Array(item[end...])
        Self.removeNotNull(&constraints)
        let space = Token(text: " ", isSpace: true)
        var rebuilt = [item[nameIndex], space, Token(text: typeName, isSpace: false)]
        rebuilt += constraints
        if notNull { rebuilt += [space, Token(text: "NOT NULL", isSpace: false)] }
        items[position] = rebuilt
    }

    /// The words that start a column constraint (or a table constraint, for the first four and
    /// `FOREIGN`).
    private static let constraintWords: Set<String> = [
        "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "NOT", "NULL", "DEFAULT", "COLLATE", "REFERENCES",
        "GENERATED", "AS",
    ]

    /// The column an item defines; nil for a table constraint.
    private static func columnName(_ item: [Token]) -> String? {
        guard let first = item.first(where: { !$0.isSpace }) else { return nil }
        if ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(first.upper) { return nil }
        return first.unquoted
    }

    /// Removes `[CONSTRAINT name] NOT NULL [ON CONFLICT action]` at the top level of a column's
    /// constraints (not inside `CHECK (…)`).
    private static func removeNotNull(_ tokens: inout [Token]) {
        var depth = 0
        var words: [Int] = []  // indices of the top-level words
        for (index, token) in tokens.enumerated() {
            if token.text == "(" { depth += 1 }
            if token.text == ")" { depth -= 1 }
            if depth == 0 && !token.isSpace && token.text != ")" { words.append(index) }
        }
        var position = 0
        var removals: [Range<Int>] = []
        while position + 1 < words.count {
            guard tokens[words[position]].upper == "NOT", tokens[words[position + 1]].upper == "NULL" else {
                position += 1
                continue
            }
            var start = words[position]
            if position >= 2, tokens[words[position - 2]].upper == "CONSTRAINT" { start = words[position - 2] }
            var last = position + 1
            if position + 4 < words.count, tokens[words[position + 2]].upper == "ON",
                tokens[words[position + 3]].upper == "CONFLICT"
            {
                last = position + 4
            }
            removals.append(start..<(words[last] + 1))
            position = last + 1
        }
        for range in removals.reversed() { tokens.removeSubrange(range) }
    }

    // MARK: - Tokens

    private struct Token: Sendable {
        var text: String
        /// Whitespace or a comment.
        var isSpace: Bool

        var upper: String { isSpace ? "" : text.uppercased() }

        /// The identifier a word or quoted name spells.
        var unquoted: String {
            guard let first = text.first, let last = text.last, text.count >= 2 else { return text }
            switch (first, last) {
            case ("\"", "\""): return String(text.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
            case ("`", "`"): return String(text.dropFirst().dropLast()).replacingOccurrences(of: "``", with: "`")
            case ("[", "]"), ("'", "'"): return String(text.dropFirst().dropLast())
            default: return text
            }
        }
    }

    /// Words, quoted names, string literals, punctuation and spaces (comments count as spaces), as
    /// SQLite's tokenizer sees them.
    private static func tokenize(_ sql: String) -> [Token] {
        let scalars = Array(sql.unicodeScalars)
        var tokens: [Token] = []
        var index = 0
        func take(_ end: Int, space: Bool = false) {
            let stop = min(end, scalars.count)
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars[index..<stop])
            tokens.append(Token(text: String(text), isSpace: space))
            index = stop
        }
        while index < scalars.count {
            let scalar = scalars[index]
            let next = index + 1 < scalars.count ? scalars[index + 1] : " "
            if scalar.properties.isWhitespace {
                var end = index
                while end < scalars.count, scalars[end].properties.isWhitespace { end += 1 }
                take(end, space: true)
            } else if scalar == "-" && next == "-" {
                // Comments become a space: a line comment must not swallow what follows it.
                var end = index
                while end < scalars.count, scalars[end] != "\n" { end += 1 }
                tokens.append(Token(text: " ", isSpace: true))
                index = end
            } else if scalar == "/" && next == "*" {
                var end = index + 2
                while end + 1 < scalars.count, !(scalars[end] == "*" && scalars[end + 1] == "/") { end += 1 }
                tokens.append(Token(text: " ", isSpace: true))
                index = min(end + 2, scalars.count)
            } else if scalar == "'" || scalar == "\"" || scalar == "`" {
                // A doubled quote inside is an escaped quote.
                var end = index + 1
                while end < scalars.count {
                    if scalars[end] == scalar {
                        if end + 1 < scalars.count, scalars[end + 1] == scalar {
                            end += 2
                            continue
                        }
                        break
                    }
                    end += 1
                }
                take(end + 1)
            } else if scalar == "[" {
                var end = index + 1
                while end < scalars.count, scalars[end] != "]" { end += 1 }
                take(end + 1)
            } else if scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || scalar == "$" || scalar.value >= 0x80
            {
                var end = index
                while end < scalars.count,
                    scalars[end] == "_" || scalars[end] == "$" || scalars[end].properties.isAlphabetic
                        || ("0"..."9").contains(scalars[end]) || scalars[end] == "." || scalars[end].value >= 0x80
                {
                    end += 1
                }
                take(end)
            } else {
                take(index + 1)
            }
        }
        return tokens
    }
}

extension String {
    fileprivate var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
