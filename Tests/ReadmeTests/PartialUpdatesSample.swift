// The README's partial-updates sample, verbatim between the markers (ReadmeSampleTests checks
// it); PartialUpdatesSampleTests runs it.
import Depot
import Foundation

// readme:begin
@Entity("contacts")
struct Contact: Equatable {  // what is stored
    @PrimaryKey var id: Int
    var name: String, email: String?
    @Column("is_online") var isOnline: Bool?
}

struct ContactDTO: Codable, Sendable {  // what the API sends: any subset of the members
    let id: Int
    @Field var name: String?
    @Field var isOnline: Bool?
}

struct ContactDTOMapper: PatchMapper {
    func patch(from dto: ContactDTO) -> Patch<Contact> {
        Patch(key: dto.id).set(\.name, dto.$name).set(\.isOnline, dto.$isOnline)
    }
}
// readme:end

func persistPartialResponse(contacts: Repository<Contact>) async throws {
    // readme:begin
    // Stored: Contact(id: 7, name: "Grace", email: "g@example.com", isOnline: true)
    let json = #"[{"id": 7, "isOnline": null}]"#
    let dtos = try JSONDecoder().decode([ContactDTO].self, from: Data(json.utf8))
    try await contacts.persist(dtos, mapper: ContactDTOMapper())
    // Stored: Contact(id: 7, name: "Grace", email: "g@example.com", isOnline: nil)
    //   name was absent: kept; isOnline was null: cleared; email is not in the DTO: kept.
    // readme:end
}
