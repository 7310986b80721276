/// A function from an input to an endpoint: one definition, many calls.
///
/// A strategy keeps "what to send for this input, and what comes back" in one place, so the
/// call site only supplies the input:
///
/// ```swift
/// let userByID = EndpointStrategy<Int, User> { id in AnyEndpoint(.get, "/users/\(id)") }
/// let ada = try await client.send(userByID(1))
/// let grace = try await client.send(userByID, 2)
/// ```
public struct EndpointStrategy<Input, Response: Sendable>: Sendable {
    private let make: @Sendable (Input) -> AnyEndpoint<Response>

    /// A strategy from a function.
    public init(_ make: @escaping @Sendable (Input) -> AnyEndpoint<Response>) {
        self.make = make
    }

    /// The endpoint for `input`.
    public func callAsFunction(_ input: Input) -> AnyEndpoint<Response> {
        make(input)
    }

    /// A strategy whose endpoints' responses are transformed by `transform`.
    ///
    /// An error `transform` throws makes the call fail with an ``HTTPError`` of kind
    /// ``HTTPError/Kind/decodingFailed``, as with ``AnyEndpoint/map(_:)``.
    public func map<NewResponse: Sendable>(
        _ transform: @escaping @Sendable (Response) throws -> NewResponse
    ) -> EndpointStrategy<Input, NewResponse> {
        EndpointStrategy<Input, NewResponse> { make($0).map(transform) }
    }
}
