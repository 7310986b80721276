import Testing

@testable import DepotHTTP
