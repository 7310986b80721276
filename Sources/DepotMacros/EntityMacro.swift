import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entity("table")`: conforms a struct to `Entity` with a schema and a row codec read off its
/// stored properties.
///
/// Generated: `static let schema`, whose columns name each stored property (its name, or the one
/// `@Column("…")` gives), keyed by the `@PrimaryKey` properties, with the `@Indexed`/`@Unique`
/// indexes; a `RowCodec` that appends each property's stored value and builds values through
/// `init(depotRow:)`, which assigns each property from its column. `static` members, computed
/// properties and `@Transient` properties (which need a default) are not columns.
public struct EntityMacro: ExtensionMacro {
    /// The extension conforming the struct, or diagnostics (and no extension) when the
    /// declaration cannot be an entity.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(
                Diagnostic(node: node, message: EntityDiagnostic.notAStruct(kind: declarationKind(declaration))))
            return []
        }
        if let generics = structDecl.genericParameterClause {
            context.diagnose(Diagnostic(node: generics, message: EntityDiagnostic.generic))
            return []
        }
        guard let table = tableName(node, structDecl: structDecl, context: context) else { return [] }
        let model = EntityModel.read(structDecl, context: context)
        guard model.isValid else { return [] }
        if model.primaryKey.isEmpty {
            var fixIts: [FixIt] = []
            if let id = model.columns.first(where: { $0.property == "id" }) {
                fixIts.append(
                    FixIt(
                        message: EntityFixIt.addPrimaryKey(property: "id"),
                        changes: [
                            .replace(
                                oldNode: Syntax(id.declaration),
                                newNode: Syntax(adding("PrimaryKey", to: id.declaration)))
                        ]))
            }
            context.diagnose(
                Diagnostic(node: structDecl.name, message: EntityDiagnostic.noPrimaryKey, fixIts: fixIts))
            return []
        }
        let access = accessLevel(structDecl)
        let typeName = type.trimmedDescription
        let source = model.extensionSource(
            typeName: typeName, table: table, access: access, conforms: !protocols.isEmpty)
        return [try ExtensionDeclSyntax(SyntaxNodeString(stringLiteral: source))]
    }

    /// The table name: the attribute's string literal, or the type's name.
    private static func tableName(
        _ node: AttributeSyntax, structDecl: StructDeclSyntax, context: some MacroExpansionContext
    ) -> String? {
        guard let argument = node.arguments?.as(LabeledExprListSyntax.self)?.first else {
            return structDecl.name.text
        }
        guard let name = stringLiteral(argument.expression) else {
            context.diagnose(Diagnostic(node: argument.expression, message: EntityDiagnostic.tableNotLiteral))
            return nil
        }
        guard isValidIdentifier(name) else {
            context.diagnose(Diagnostic(node: argument.expression, message: EntityDiagnostic.invalidTable(name)))
            return nil
        }
        return name
    }

    private static func declarationKind(_ declaration: some DeclGroupSyntax) -> String {
        if declaration.is(ClassDeclSyntax.self) { return "a class" }
        if declaration.is(EnumDeclSyntax.self) { return "an enum" }
        if declaration.is(ActorDeclSyntax.self) { return "an actor" }
        if declaration.is(ProtocolDeclSyntax.self) { return "a protocol" }
        return "an extension"
    }

    /// `public` or `package` when the struct is (its generated members must be as visible).
    private static func accessLevel(_ structDecl: StructDeclSyntax) -> String {
        for modifier in structDecl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }

}

/// The marker attributes (`@PrimaryKey`, `@Column`, `@Indexed`, `@Unique`, `@Transient`): read by
/// `@Entity`, they expand to nothing themselves.
public struct MarkerMacro: PeerMacro {
    /// Nothing; a diagnostic when the attribute is not on a property.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if !declaration.is(VariableDeclSyntax.self) {
            context.diagnose(
                Diagnostic(
                    node: node, message: EntityDiagnostic.markerOnNonProperty(node.attributeName.trimmedDescription)))
        }
        return []
    }
}

/// The stored properties of an `@Entity` struct, as columns.
struct EntityModel {
    struct Property {
        var property: String
        var column: String
        var type: String
        var declaration: VariableDeclSyntax
        var isKey: Bool
        var indexes: [(name: String?, unique: Bool)]
    }

    var columns: [Property] = []
    var isValid = true

    var primaryKey: [Property] { columns.filter(\.isKey) }

    static func read(_ structDecl: StructDeclSyntax, context: some MacroExpansionContext) -> EntityModel {
        var model = EntityModel()
        var namesSeen: [String: String] = [:]
        for member in structDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: {
                [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind)
            }) {
                continue
            }
            let attributes = Attributes(variable.attributes)
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            // The type annotation of `var a, b: Int` sits on the last binding.
            var pendingType: TypeSyntax?
            var bindings: [(PatternBindingSyntax, TypeSyntax?)] = []
            for binding in variable.bindings.reversed() {
                if let annotation = binding.typeAnnotation?.type { pendingType = annotation }
                bindings.append(
                    (binding, binding.typeAnnotation?.type ?? (binding.initializer == nil ? pendingType : nil)))
            }
            for (binding, type) in bindings.reversed() {
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                let name = identifier.identifier.identifier?.name ?? identifier.identifier.text
                if attributes.isTransient {
                    if binding.initializer == nil && !(type.map(isOptional) ?? false && !isLet) {
                        context.diagnose(
                            Diagnostic(
                                node: identifier, message: EntityDiagnostic.transientWithoutDefault(name),
                                fixIts: optionalDefaultFixIt(binding, type: type)))
                        model.isValid = false
                    }
                    continue
                }
                guard let type = type ?? binding.initializer.flatMap({ literalType($0.value) }) else {
                    context.diagnose(
                        Diagnostic(
                            node: identifier, message: EntityDiagnostic.missingType(name),
                            fixIts: inferredTypeFixIt(binding)))
                    model.isValid = false
                    continue
                }
                if let reason = notStorable(type) {
                    context.diagnose(
                        Diagnostic(
                            node: type, message: EntityDiagnostic.notStorable(name, type.trimmedDescription, reason),
                            fixIts: [transientFixIt(variable)]))
                    model.isValid = false
                    continue
                }
                if isLet, binding.initializer != nil {
                    context.diagnose(
                        Diagnostic(
                            node: identifier, message: EntityDiagnostic.letWithValue(name),
                            fixIts: [
                                FixIt(
                                    message: EntityFixIt.makeVar,
                                    changes: [
                                        .replace(
                                            oldNode: Syntax(variable.bindingSpecifier),
                                            newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var)))
                                        )
                                    ])
                            ]))
                    model.isValid = false
                    continue
                }
                var column = name
                if let argument = attributes.columnName {
                    guard let literal = stringLiteral(argument) else {
                        context.diagnose(Diagnostic(node: argument, message: EntityDiagnostic.columnNotLiteral))
                        model.isValid = false
                        continue
                    }
                    guard isValidIdentifier(literal) else {
                        context.diagnose(
                            Diagnostic(node: argument, message: EntityDiagnostic.invalidColumn(literal, property: name))
                        )
                        model.isValid = false
                        continue
                    }
                    column = literal
                } else if !isValidIdentifier(name) {
                    context.diagnose(
                        Diagnostic(node: identifier, message: EntityDiagnostic.invalidColumn(name, property: name)))
                    model.isValid = false
                    continue
                }
                if let other = namesSeen[column.lowercased()] {
                    context.diagnose(
                        Diagnostic(
                            node: attributes.columnName.map(Syntax.init) ?? Syntax(identifier),
                            message: EntityDiagnostic.duplicateColumn(column, property: name, other: other)))
                    model.isValid = false
                    continue
                }
                namesSeen[column.lowercased()] = name
                if attributes.isPrimaryKey, isOptional(type) {
                    context.diagnose(Diagnostic(node: type, message: EntityDiagnostic.optionalKey(name)))
                    model.isValid = false
                    continue
                }
                model.columns.append(
                    Property(
                        property: name, column: column, type: type.trimmedDescription, declaration: variable,
                        isKey: attributes.isPrimaryKey, indexes: attributes.indexes))
            }
        }
        return model
    }

    /// The extension's source.
    func extensionSource(typeName: String, table: String, access: String, conforms: Bool) -> String {
        let keys = primaryKey.map { "\\\(typeName).\(escaped($0.property))" }.joined(separator: ", ")
        var lines: [String] = []
        lines.append("extension \(typeName)\(conforms ? ": Depot.Entity" : "") {")
        lines.append("    /// The table `\(table)`, generated by `@Entity` from the stored properties.")
        lines.append("    \(access)static let schema = Depot.Schema<\(typeName)>(")
        lines.append("        \(literal(table)), primaryKey: \(keys),")
        lines.append("        codec: Depot.RowCodec<\(typeName)>(")
        lines.append("            encode: { entity, values in")
        for column in columns {
            lines.append("                values.append(entity.\(escaped(column.property)).storedValue)")
        }
        lines.append("            },")
        lines.append("            decode: { row in try \(typeName)(depotRow: &row) })")
        lines.append("    ) {")
        for column in columns {
            lines.append("        Depot.Column(\\\(typeName).\(escaped(column.property)), \(literal(column.column)))")
        }
        lines.append("    }")
        for index in indexes {
            let paths = index.columns.map { "\\\(typeName).\(escaped($0))" }.joined(separator: ", ")
            let name = index.name.map { ", name: \(literal($0))" } ?? ""
            lines.append("    .\(index.unique ? "unique" : "index")(\(paths)\(name))")
        }
        lines.append("")
        lines.append(
            "    /// Builds a value from a row, each stored property from its column (generated by `@Entity`).")
        lines.append("    \(access)init(depotRow row: inout Depot.EntityRowReader) throws {")
        for (position, column) in columns.enumerated() {
            lines.append("        self.\(escaped(column.property)) = try row.read(\(position))")
        }
        lines.append("    }")
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The indexes the properties declare: one per unnamed attribute, one per name shared by
    /// several properties (a composite index, in declaration order).
    var indexes: [(name: String?, unique: Bool, columns: [String])] {
        var result: [(name: String?, unique: Bool, columns: [String])] = []
        for column in columns {
            for index in column.indexes {
                if let name = index.name,
                    let position = result.firstIndex(where: { $0.name == name && $0.unique == index.unique })
                {
                    result[position].columns.append(column.property)
                } else {
                    result.append((index.name, index.unique, [column.property]))
                }
            }
        }
        return result
    }
}

/// The Depot attributes on one property.
struct Attributes {
    var isPrimaryKey = false
    var isTransient = false
    var columnName: ExprSyntax?
    var indexes: [(name: String?, unique: Bool)] = []

    init(_ list: AttributeListSyntax) {
        for element in list {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription
            let argument = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
            switch name {
            case "PrimaryKey", "Depot.PrimaryKey": isPrimaryKey = true
            case "Transient", "Depot.Transient": isTransient = true
            case "Column", "Depot.Column": columnName = argument
            case "Indexed", "Depot.Indexed": indexes.append((argument.flatMap(stringLiteral), false))
            case "Unique", "Depot.Unique": indexes.append((argument.flatMap(stringLiteral), true))
            default: continue
            }
        }
    }
}

// MARK: - Syntax helpers

/// Whether an accessor block makes a computed property (`get`, or a bare body), not observers.
func isComputed(_ block: AccessorBlockSyntax) -> Bool {
    switch block.accessors {
    case .getter: return true
    case .accessors(let list):
        return list.contains { accessor in
            ![.keyword(.willSet), .keyword(.didSet)].contains(accessor.accessorSpecifier.tokenKind)
        }
    }
}

func isOptional(_ type: TypeSyntax) -> Bool {
    if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional" { return true }
    if let member = type.as(MemberTypeSyntax.self), member.name.text == "Optional",
        member.baseType.trimmedDescription == "Swift"
    {
        return true
    }
    return false
}

/// Why `type` can never be a column (the shapes no conformance can make storable), or `nil`.
func notStorable(_ type: TypeSyntax) -> String? {
    var type = type
    while true {
        if let optional = type.as(OptionalTypeSyntax.self) {
            type = optional.wrappedType
        } else if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            type = optional.wrappedType
        } else if let attributed = type.as(AttributedTypeSyntax.self) {
            type = attributed.baseType
        } else {
            break
        }
    }
    if type.is(FunctionTypeSyntax.self) { return "a function cannot be stored" }
    if let tuple = type.as(TupleTypeSyntax.self) {
        if tuple.elements.count == 1, let only = tuple.elements.first { return notStorable(only.type) }
        return "a tuple cannot be stored; use a struct conforming to StorableAsJSON"
    }
    if type.is(MetatypeTypeSyntax.self) { return "a metatype cannot be stored" }
    if let some = type.as(SomeOrAnyTypeSyntax.self) {
        return
            "'\(some.someOrAnySpecifier.text)' types cannot be stored; use a concrete type conforming to StorableValue"
    }
    if let identifier = type.as(IdentifierTypeSyntax.self), ["Any", "AnyObject"].contains(identifier.name.text) {
        return "'\(identifier.name.text)' cannot be stored; use a concrete type conforming to StorableValue"
    }
    return nil
}

func stringLiteral(_ expression: ExprSyntax) -> String? {
    guard let literal = expression.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
        case .stringSegment(let segment) = literal.segments.first
    else { return nil }
    return segment.content.text
}

/// The identifier rule Depot's schemas enforce (`TableDescription.isValidIdentifier`).
func isValidIdentifier(_ name: String) -> Bool {
    guard let first = name.utf8.first, name.utf8.count <= 63 else { return false }
    func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }
    return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
}

/// A Swift string literal for `text` (names passed the identifier rule; quotes escaped anyway).
func literal(_ text: String) -> String {
    var escaped = "\""
    for character in text {
        if character == "\\" || character == "\"" { escaped.append("\\") }
        escaped.append(character)
    }
    return escaped + "\""
}

/// A property name usable after `.` and in key paths (backquoted when it is a keyword).
func escaped(_ name: String) -> String {
    let keywords: Set<String> = [
        "default", "self", "Type", "init", "subscript", "class", "struct", "enum", "protocol", "import", "func", "var",
        "let", "in", "is", "as", "return", "throw", "throws", "where", "case", "switch", "for", "while", "do", "if",
        "else", "guard", "defer", "repeat", "break", "continue", "fallthrough", "static", "extension", "operator",
        "typealias", "associatedtype", "true", "false", "nil", "try", "catch", "inout", "internal", "private", "public",
        "fileprivate", "rethrows", "super", "Any",
    ]
    return keywords.contains(name) ? "`\(name)`" : name
}

/// `variable` with `@name` added after its attributes, on the same line, its indentation kept.
func adding(_ name: String, to variable: VariableDeclSyntax) -> VariableDeclSyntax {
    let leading = variable.leadingTrivia
    let attribute = AttributeListSyntax.Element.attribute(
        AttributeSyntax(
            leadingTrivia: variable.attributes.isEmpty ? leading : [],
            attributeName: IdentifierTypeSyntax(name: .identifier(name)), trailingTrivia: .space))
    let base = variable.attributes.isEmpty ? variable.with(\.leadingTrivia, []) : variable
    return base.with(\.attributes, base.attributes + [attribute])
}

private func transientFixIt(_ variable: VariableDeclSyntax) -> FixIt {
    FixIt(
        message: EntityFixIt.markTransient,
        changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(adding("Transient", to: variable)))])
}

private func optionalDefaultFixIt(_ binding: PatternBindingSyntax, type: TypeSyntax?) -> [FixIt] {
    guard let type, isOptional(type) else { return [] }
    let initializer = InitializerClauseSyntax(
        equal: .equalToken(leadingTrivia: .space, trailingTrivia: .space), value: NilLiteralExprSyntax())
    return [
        FixIt(
            message: EntityFixIt.addNilDefault,
            changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(binding.with(\.initializer, initializer)))])
    ]
}

/// The type of a property initialized by a plain literal, which Swift infers the same way
/// (`var count = 0` is an `Int`).
func literalType(_ value: ExprSyntax) -> TypeSyntax? {
    var value = value
    if let prefix = value.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" { value = prefix.expression }
    let name: String
    if value.is(IntegerLiteralExprSyntax.self) {
        name = "Int"
    } else if value.is(FloatLiteralExprSyntax.self) {
        name = "Double"
    } else if value.is(StringLiteralExprSyntax.self) {
        name = "String"
    } else if value.is(BooleanLiteralExprSyntax.self) {
        name = "Bool"
    } else {
        return nil
    }
    return TypeSyntax(IdentifierTypeSyntax(name: .identifier(name)))
}

/// For a property whose type cannot be read off its declaration: `: T` for an initializer call
/// `T(…)`, the only other shape whose type is plain to see.
private func inferredTypeFixIt(_ binding: PatternBindingSyntax) -> [FixIt] {
    guard let call = binding.initializer?.value.as(FunctionCallExprSyntax.self),
        let callee = call.calledExpression.as(DeclReferenceExprSyntax.self),
        callee.baseName.text.first?.isUppercase == true
    else { return [] }
    let name = callee.baseName.text
    let annotation = TypeAnnotationSyntax(
        colon: .colonToken(trailingTrivia: .space),
        type: IdentifierTypeSyntax(name: .identifier(name)))
    let pattern = binding.pattern.with(\.trailingTrivia, [])
    return [
        FixIt(
            message: EntityFixIt.addType(name),
            changes: [
                .replace(
                    oldNode: Syntax(binding),
                    newNode: Syntax(
                        binding.with(\.pattern, pattern).with(
                            \.typeAnnotation, annotation.with(\.trailingTrivia, .space))))
            ])
    ]
}

// MARK: - Messages

enum EntityDiagnostic: DiagnosticMessage {
    case notAStruct(kind: String)
    case generic
    case tableNotLiteral
    case invalidTable(String)
    case noPrimaryKey
    case transientWithoutDefault(String)
    case missingType(String)
    case notStorable(String, String, String)
    case letWithValue(String)
    case columnNotLiteral
    case invalidColumn(String, property: String)
    case duplicateColumn(String, property: String, other: String)
    case optionalKey(String)
    case markerOnNonProperty(String)

    var message: String {
        switch self {
        case .notAStruct(let kind):
            "@Entity applies to a struct, not \(kind): Depot stores plain values (write the entity as a struct)"
        case .generic:
            "@Entity does not apply to a generic struct: its schema is one static value; declare a Schema by hand"
        case .tableNotLiteral: "the table name of @Entity must be a string literal"
        case .invalidTable(let name):
            "table name '\(name)' is not a valid identifier (ASCII letters, digits and _, not starting with a digit, at most 63 bytes)"
        case .noPrimaryKey:
            "an @Entity needs a primary key: mark its key property (or properties) @PrimaryKey"
        case .transientWithoutDefault(let name):
            "@Transient property '\(name)' needs a default value: rows do not carry it, so reading one must give it a value"
        case .missingType(let name):
            "stored property '\(name)' needs a type annotation: @Entity reads each column's type from its declaration"
        case .notStorable(let name, let type, let reason):
            "property '\(name)' of type '\(type)' cannot be a column: \(reason); or mark it @Transient"
        case .letWithValue(let name):
            "'\(name)' is a let with an initial value, so a row cannot set it: make it a var, or mark it @Transient"
        case .columnNotLiteral: "the column name of @Column must be a string literal"
        case .invalidColumn(let name, let property):
            "column name '\(name)' of property '\(property)' is not a valid identifier (ASCII letters, digits and _, not starting with a digit, at most 63 bytes)"
        case .duplicateColumn(let name, let property, let other):
            "column '\(name)' of property '\(property)' is already the column of '\(other)' (names compare without case)"
        case .optionalKey(let name):
            "primary-key property '\(name)' is optional; keys cannot be NULL"
        case .markerOnNonProperty(let name):
            "@\(name) applies to a stored property of an @Entity struct"
        }
    }

    var diagnosticID: MessageID {
        let id: String
        switch self {
        case .notAStruct: id = "notAStruct"
        case .generic: id = "generic"
        case .tableNotLiteral: id = "tableNotLiteral"
        case .invalidTable: id = "invalidTable"
        case .noPrimaryKey: id = "noPrimaryKey"
        case .transientWithoutDefault: id = "transientWithoutDefault"
        case .missingType: id = "missingType"
        case .notStorable: id = "notStorable"
        case .letWithValue: id = "letWithValue"
        case .columnNotLiteral: id = "columnNotLiteral"
        case .invalidColumn: id = "invalidColumn"
        case .duplicateColumn: id = "duplicateColumn"
        case .optionalKey: id = "optionalKey"
        case .markerOnNonProperty: id = "markerOnNonProperty"
        }
        return MessageID(domain: "Depot", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

enum EntityFixIt: FixItMessage {
    case addPrimaryKey(property: String)
    case markTransient
    case addNilDefault
    case makeVar
    case addType(String)

    var message: String {
        switch self {
        case .addPrimaryKey(let property): "mark '\(property)' @PrimaryKey"
        case .markTransient: "mark it @Transient (not stored)"
        case .addNilDefault: "default it to nil"
        case .makeVar: "make it a var"
        case .addType(let type): "declare it ': \(type)'"
        }
    }

    var fixItID: MessageID { MessageID(domain: "Depot", id: "\(self)") }
}
