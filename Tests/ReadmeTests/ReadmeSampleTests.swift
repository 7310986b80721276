import Foundation
import Testing

/// The README's Swift samples, and the compiled code they must match.
///
/// A sample is compiled when its text stands between `// readme:begin` and `// readme:end` in a
/// Swift file under `Tests/` (any target), compared after leading `import` lines are dropped and
/// common indentation removed: a sample of statements can sit inside a function there. A package
/// manifest fragment cannot be compiled by a test; it is marked `<!-- readme:manifest -->` and
/// the products it names are checked against `Package.swift` instead.
enum ReadmeSamples {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    struct Sample {
        var line: Int
        var text: String
        var isManifest: Bool
    }

    /// Every fenced Swift block of the README (or of the Markdown file at `path`, from the
    /// package's root), with the line it starts on.
    static func samples(in path: String = "README.md") throws -> [Sample] {
        let lines = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            .components(separatedBy: "\n")
        var samples: [Sample] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index].trimmingCharacters(in: .whitespaces)
            guard fence == "```swift" else {
                index += 1
                continue
            }
            let start = index
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[index])
                index += 1
            }
            let marker = lines[..<start].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            samples.append(
                Sample(
                    line: start + 1, text: body.joined(separator: "\n"),
                    isManifest: marker?.contains("<!-- readme:manifest -->") == true))
            index += 1
        }
        return samples
    }

    /// What a compiled region imports: its own leading `import` lines, and its file's.
    struct RegionImports {
        var own: Set<String> = []
        var file: Set<String> = []
    }

    /// The text between every `// readme:begin` / `// readme:end` pair in the Swift files under
    /// `Tests/` (normalized), each with what it imports.
    static func compiledRegions() throws -> [String: RegionImports] {
        let tests = root.appendingPathComponent("Tests")
        guard let files = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil) else { return [:] }
        var regions: [String: RegionImports] = [:]
        for case let file as URL in files where file.pathExtension == "swift" {
            let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
            let imports = Set(lines.compactMap(imported))
            var current: [String]?
            for line in lines {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed == "// readme:begin" {
                    current = []
                } else if trimmed == "// readme:end" {
                    if let current {
                        let text = current.joined(separator: "\n")
                        regions[normalized(text), default: RegionImports()].file.formUnion(imports)
                        regions[normalized(text), default: RegionImports()].own.formUnion(Self.imports(of: text))
                    }
                    current = nil
                } else {
                    current?.append(line)
                }
            }
        }
        return regions
    }

    /// The module `line` imports, if it is an import.
    static func imported(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("import ") else { return nil }
        return String(trimmed.dropFirst("import ".count)).trimmingCharacters(in: .whitespaces)
    }

    /// The modules `sample` imports in its leading lines.
    static func imports(of sample: String) -> Set<String> {
        var modules: Set<String> = []
        for line in sample.components(separatedBy: "\n") {
            if let module = imported(line) {
                modules.insert(module)
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                break
            }
        }
        return modules
    }

    /// Checks that `sample` (at `place`) is a compiled region, with the region's own imports when
    /// it has some, and otherwise only imports its compiled copy's file has too.
    static func expectCompiled(_ sample: Sample, at place: String, in regions: [String: RegionImports]) {
        guard let compiled = regions[normalized(sample.text)] else {
            Issue.record(
                """
                \(place): this sample is not between `// readme:begin` and `// readme:end` in any Swift \
                file under Tests/ (or it differs from the compiled copy)
                """)
            return
        }
        let imported = imports(of: sample.text)
        if !compiled.own.isEmpty {
            #expect(
                imported == compiled.own,
                "\(place): the sample imports \(imported.sorted()), its compiled copy \(compiled.own.sorted())")
        }
        let missing = imported.subtracting(compiled.file)
        #expect(
            missing.isEmpty, "\(place): the sample imports \(missing.sorted()), which its compiled copy's file does not"
        )
    }

    /// `text` without leading `import` lines, trailing spaces, surrounding blank lines and common indentation.
    static func normalized(_ text: String) -> String {
        var lines = text.components(separatedBy: "\n").map { line -> String in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
        while let first = lines.first, first.isEmpty || imported(first) != nil { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }
}

@Suite("README samples")
struct ReadmeSampleTests {
    @Test("every Swift sample in the README is code compiled by a test, character for character, with its imports")
    func everySampleIsCompiled() throws {
        let samples = try ReadmeSamples.samples()
        let regions = try ReadmeSamples.compiledRegions()
        #expect(samples.count >= 10)
        for sample in samples where !sample.isManifest {
            ReadmeSamples.expectCompiled(sample, at: "README.md line \(sample.line)", in: regions)
        }
    }

    @Test(
        "every Swift sample of every DocC catalog is code compiled by a test, character for character, with its imports"
    )
    func everyDocCSampleIsCompiled() throws {
        let regions = try ReadmeSamples.compiledRegions()
        let sources = ReadmeSamples.root.appendingPathComponent("Sources")
        var articles: [String] = []
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let catalog = "Sources/\(module)/\(module).docc"
            guard
                let files = try? FileManager.default.contentsOfDirectory(
                    atPath: "\(sources.path)/\(module)/\(module).docc")
            else { continue }
            articles += files.filter { $0.hasSuffix(".md") }.map { "\(catalog)/\($0)" }
        }
        #expect(articles.count >= 10)
        for article in articles {
            for sample in try ReadmeSamples.samples(in: article) {
                ReadmeSamples.expectCompiled(sample, at: "\(article) line \(sample.line)", in: regions)
            }
        }
    }

    @Test("the package manifest fragments in the README name only products and packages the package has")
    func manifestFragmentsNameRealProducts() throws {
        let manifest = try String(
            contentsOf: ReadmeSamples.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let fragments = try ReadmeSamples.samples().filter(\.isManifest)
        #expect(!fragments.isEmpty)
        for fragment in fragments {
            let products = fragment.text.components(separatedBy: ".product(name: \"").dropFirst().compactMap {
                piece -> (name: String, package: String)? in
                let fields = piece.components(separatedBy: "\"")
                guard fields.count > 2, fields[1].contains("package:") else { return (fields[0], "depot") }
                return (fields[0], fields[2])
            }
            let packages = fragment.text.components(separatedBy: ".package(url: \"").dropFirst().compactMap {
                $0.components(separatedBy: ")").first
            }
            #expect(!products.isEmpty, "README.md line \(fragment.line): a manifest fragment naming no product")
            for product in products where product.package == "depot" {
                #expect(
                    manifest.contains(".library(name: \"\(product.name)\""),
                    "README.md line \(fragment.line): product \(product.name) is not a library of Package.swift")
            }
            for product in products where product.package != "depot" {
                // Another package's product: one this package depends on, by the same name.
                #expect(
                    manifest.contains(".product(name: \"\(product.name)\", package: \"\(product.package)\")"),
                    "README.md line \(fragment.line): \(product.package)'s \(product.name) is not one Package.swift uses"
                )
            }
            for package in packages where !package.contains("depot-swift/depot") {
                // The same URL and version as Package.swift's own dependency.
                #expect(
                    manifest.contains(".package(url: \"\(package))"),
                    "README.md line \(fragment.line): .package(url: \"\(package)) is not as in Package.swift")
            }
        }
    }
}

@Suite("README: table of contents")
struct ReadmeContentsTests {
    @Test("the table of contents lists every section and subsection, in order, with GitHub's anchors")
    func contentsMatchHeadings() throws {
        let lines = try String(contentsOf: ReadmeSamples.root.appendingPathComponent("README.md"), encoding: .utf8)
            .components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "## Contents"))
        let end = try #require(lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") })
        let listed = lines[(start + 1)..<end].filter { !$0.isEmpty }
        var inCode = false
        var headings: [String] = []
        for (index, line) in lines.enumerated() where !(start..<end).contains(index) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode else { continue }
            for (prefix, indent) in [("## ", ""), ("### ", "  ")] where line.hasPrefix(prefix) {
                let title = String(line.dropFirst(prefix.count))
                let anchor = String(
                    title.lowercased().unicodeScalars.filter {
                        ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == " " || $0 == "-"
                    }
                ).replacingOccurrences(of: " ", with: "-")
                headings.append("\(indent)- [\(title)](#\(anchor))")
            }
        }
        #expect(listed == headings)
    }
}
