// A stand-in, on Linux only, for the part of SwiftUI the README's screen uses: `View`, `@State`,
// `List`, `VStack`, `Text`, `Button`, `ProgressView`, `.refreshable`, `.overlay` and `.task`, and
// `App` with a `WindowGroup` scene, with SwiftUI's own
// signatures (main-actor views, `@Sendable` refresh actions, view builders). There is no SwiftUI
// on Linux; with this module the sample compiles unchanged there, and a test renders it to lines
// of text and runs its refresh. On Apple platforms the package does not build this module and the
// sample uses SwiftUI itself.

/// A piece of user interface.
@MainActor
@preconcurrency
public protocol View {
    /// What the view is made of.
    associatedtype Body: View
    /// What the view is made of.
    @ViewBuilder var body: Body { get }
}

extension Never: View {
    /// Never called: primitive views have no body.
    public var body: Never { fatalError("a primitive view has no body") }
}

/// Builds views from the statements of a closure.
@resultBuilder
public enum ViewBuilder {
    /// No view.
    public static func buildBlock() -> EmptyView { EmptyView() }
    /// One view.
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    /// Several views, in order.
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView {
        var views: [any View] = []
        for view in repeat each content { views.append(view) }
        return TupleView(views)
    }
    /// A view shown only when a condition holds.
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    /// The first branch of an `if`/`else`.
    public static func buildEither<Content: View>(first: Content) -> TupleView { TupleView([first]) }
    /// The second branch of an `if`/`else`.
    public static func buildEither<Content: View>(second: Content) -> TupleView { TupleView([second]) }
}

extension Optional: View where Wrapped: View {
    /// Never called: the renderer looks inside.
    public var body: Never { fatalError("a primitive view has no body") }
}

/// A value a view owns across updates.
@propertyWrapper
public struct State<Value>: @unchecked Sendable {
    private final class Box: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }
    private let box: Box

    /// A state starting at `wrappedValue`.
    public init(wrappedValue: Value) { box = Box(wrappedValue) }
    /// A state starting at `initialValue`.
    public init(initialValue: Value) { box = Box(initialValue) }
    /// The value.
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }
}

/// No view.
nonisolated public struct EmptyView: View {
    /// No view.
    nonisolated public init() {}
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// Several views, in order.
nonisolated public struct TupleView: View {
    let views: [any View]
    nonisolated init(_ views: [any View]) { self.views = views }
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// A line of text.
nonisolated public struct Text: View {
    let content: String
    /// The text `content`.
    nonisolated public init<S: StringProtocol>(_ content: S) { self.content = String(content) }
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// A spinner.
nonisolated public struct ProgressView: View {
    /// A spinner.
    nonisolated public init() {}
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// A button with a title.
nonisolated public struct Button: View {
    let title: String
    let action: @MainActor () -> Void
    /// A button titled `title` that runs `action` when tapped.
    nonisolated public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {
        self.title = String(title)
        self.action = action
    }
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// Views stacked vertically.
nonisolated public struct VStack<Content: View>: View {
    let content: Content
    /// The views `content` builds, stacked.
    nonisolated public init(@ViewBuilder content: () -> Content) { self.content = content() }
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// A scrolling list with a row for each element of `data`.
nonisolated public struct List<Data: RandomAccessCollection, ID: Hashable, RowContent: View>: View {
    let rows: [RowContent]
    /// A row for each element of `data`, identified by `id`.
    nonisolated public init(
        _ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent
    ) {
        rows = data.map(rowContent)
    }
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

/// An app: what `@main` marks in an app target.
@MainActor
@preconcurrency
public protocol App {
    /// The app's scenes.
    associatedtype Body: Scene
    /// The app's scenes.
    @SceneBuilder var body: Body { get }
    /// The app, as the system makes it at launch.
    init()
}

/// A part of an app's user interface (a window).
@MainActor
@preconcurrency
public protocol Scene {}

/// Builds scenes from the statements of a closure (one scene here).
@resultBuilder
public enum SceneBuilder {
    /// One scene.
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// A window showing `content`.
nonisolated public struct WindowGroup<Content: View>: Scene {
    let content: Content
    /// A window showing what `content` builds.
    nonisolated public init(@ViewBuilder content: () -> Content) { self.content = content() }
}

/// A view with a modifier applied.
public struct ModifiedContent<Content: View>: View {
    let content: Content
    let overlay: (any View)?
    let refresh: (@Sendable () async -> Void)?
    var task: (@Sendable () async -> Void)? = nil
    /// Never called.
    @MainActor public var body: Never { fatalError("a primitive view has no body") }
}

extension View {
    /// Runs `action` when the user pulls to refresh.
    public func refreshable(action: @escaping @Sendable () async -> Void) -> ModifiedContent<Self> {
        ModifiedContent(content: self, overlay: nil, refresh: action)
    }

    /// Runs `action` when the view appears (cancelled when it disappears).
    public func task(@_inheritActorContext _ action: @escaping @Sendable () async -> Void) -> ModifiedContent<Self> {
        ModifiedContent(content: self, overlay: nil, refresh: nil, task: action)
    }

    /// Puts what `content` builds over this view.
    public func overlay<V: View>(@ViewBuilder content: () -> V) -> ModifiedContent<Self> {
        ModifiedContent(content: self, overlay: content(), refresh: nil)
    }
}

/// What a view shows, as lines of text (a test's stand-in for looking at the screen), and the
/// refresh actions in it (what pulling to refresh would run).
@MainActor
public struct Rendering {
    /// Each text, `[spinner]` for a progress view, `[title]` for a button, in order.
    public var lines: [String] = []
    /// The `.refreshable` actions, outermost first.
    public var refreshActions: [@Sendable () async -> Void] = []
    /// The buttons' actions (what tapping each would run), in order.
    public var buttonActions: [@MainActor () -> Void] = []
    /// The `.task` actions (what appearing would start), in order.
    public var taskActions: [@Sendable () async -> Void] = []
    /// The views of the app's own types rendered (through their `body`), outermost first: a test
    /// renders one of them again, as SwiftUI keeps a view's state across updates.
    public var views: [any View] = []

    /// Renders `view`, evaluating bodies as SwiftUI would on an update.
    public init(_ view: some View) { add(view) }

    /// Renders the window of `app`'s scene.
    public init(app: some App) {
        if let window = app.body as? any WindowContent { window.render(into: &self) }
    }

    private mutating func add(_ view: any View) {
        switch view {
        case let text as Text: lines.append(text.content)
        case is ProgressView: lines.append("[spinner]")
        case let button as Button:
            lines.append("[\(button.title)]")
            buttonActions.append(button.action)
        case is EmptyView: break
        case let tuple as TupleView: for view in tuple.views { add(view) }
        case let primitive as any Primitive: primitive.render(into: &self)
        default:
            views.append(view)
            add(view.body)
        }
    }

    fileprivate mutating func render(_ view: any View) { add(view) }
}

/// A view the renderer looks inside of (generic, so matched through this protocol).
@MainActor
private protocol Primitive {
    func render(into rendering: inout Rendering)
}

extension VStack: Primitive {
    @MainActor fileprivate func render(into rendering: inout Rendering) { rendering.render(content) }
}

extension List: Primitive {
    @MainActor fileprivate func render(into rendering: inout Rendering) { for row in rows { rendering.render(row) } }
}

extension Optional: Primitive where Wrapped: View {
    @MainActor fileprivate func render(into rendering: inout Rendering) {
        if let wrapped = self { rendering.render(wrapped) }
    }
}

/// A window the renderer looks inside of.
@MainActor
private protocol WindowContent {
    func render(into rendering: inout Rendering)
}

extension WindowGroup: WindowContent {
    @MainActor fileprivate func render(into rendering: inout Rendering) { rendering.render(content) }
}

extension ModifiedContent: Primitive {
    @MainActor fileprivate func render(into rendering: inout Rendering) {
        if let refresh { rendering.refreshActions.append(refresh) }
        if let task { rendering.taskActions.append(task) }
        rendering.render(content)
        if let overlay { rendering.render(overlay) }
    }
}
