import Depot

/// A partial airport as a PATCH body or a partial API response carries it: absent members leave
/// the stored value alone, `null` clears an optional one.
public struct AirportPatchDTO: Codable, Sendable {
    public var icao: String
    @Field public var iata: String?
    @Field public var name: String?
    @Field public var city: String?
    @Field public var country: String?
    @Field public var elevation: Double?

    public init(icao: String) { self.icao = icao }
}

/// Maps partial airports to patches.
public struct AirportPatchMapper: PatchMapper {
    public init() {}
    public func patch(from dto: AirportPatchDTO) -> Patch<Airport> {
        Patch(key: dto.icao).set(\.iata, dto.$iata).set(\.name, dto.$name).set(\.city, dto.$city)
            .set(\.country, dto.$country).set(\.elevation, dto.$elevation)
    }
}
