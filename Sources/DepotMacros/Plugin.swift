import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The macros Depot declares, served to the compiler.
@main
struct DepotMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntityMacro.self, MarkerMacro.self]
}
