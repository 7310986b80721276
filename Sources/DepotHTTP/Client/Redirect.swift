import Foundation

/// How the ``APIClient`` follows a redirect: transports hand 3xx responses back, and the client
/// builds the next request, so that credentials never leave the origin they were added for.
///
/// - `303`: the next request is a `GET` without a body (a `HEAD` stays a `HEAD`); `301`, `302`:
///   a `POST` becomes such a `GET`, other methods stay (as browsers do); `307`, `308`: same
///   method, same body.
/// - When the target's origin (scheme, host, port) differs from the request's, `Authorization`,
///   `Proxy-Authorization`, `Cookie` and every header a middleware declared as a credential
///   (``Middleware/credentialHeaders``, such as `TokenAuthentication(headerName: "X-Api-Key")`)
///   are dropped.
/// - The origin is the only boundary: a redirect out of the base URL's path on the same origin
///   (`https://api.example.com/v1/me` → `/login`) is followed with every header, as any other
///   redirect within the origin (the same server answered, and saw the credentials already). A
///   failure after it names the endpoint called, as every failure of the call does.
/// - At most ``maximum`` redirects per attempt; only `http` and `https` targets are followed.
enum Redirect {
    /// The most redirects one attempt follows.
    static let maximum = 10

    /// The request that follows `response` to `request`, or `nil` when it is no redirect to follow.
    static func next(
        after request: TransportRequest, _ response: TransportResponse, credentialHeaders: Set<String>
    ) -> TransportRequest? {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"],
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }
        var next = request
        next.url = target
        let becomesGet =
            response.status == 303 || ((response.status == 301 || response.status == 302) && request.method == .post)
        if becomesGet && request.method != .head {
            next.method = .get
            next.body = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding"] { next.headers.remove(name) }
        }
        if origin(of: target) != origin(of: request.url) {
            // `remove` matches names in any case.
            for name in HeaderFields.credentials.union(credentialHeaders) { next.headers.remove(name) }
        }
        return next
    }

    /// Scheme, host and port (the scheme's default when absent), lowercased: RFC 6454's origin.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
