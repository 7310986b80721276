import Testing

@testable import DepotPostgres
