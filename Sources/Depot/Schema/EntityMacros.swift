/// Makes a struct an ``Entity`` from its stored properties: the schema written once.
///
/// ```swift
/// @Entity("users")
/// struct User: Equatable {
///     @PrimaryKey var id: String
///     var name: String
///     @Column("is_online") var isOnline: Bool?
///     @Indexed var country: String
///     @Unique var email: String?
///     @Transient var cachedAvatar: Data? = nil
/// }
/// ```
///
/// Each stored property becomes a column named like the property (``Column(_:)`` renames it);
/// `static` members and computed properties are not columns, and `@Transient` ones are left out
/// (they need a default value). ``PrimaryKey()`` marks the key; on several properties it makes a
/// composite key, in declaration order. ``Indexed(_:)`` and ``Unique(_:)`` declare indexes: one per
/// property, or one composite index for the properties that name the same index.
///
/// The macro generates `static let schema` with a ``RowCodec``: rows are written by reading each
/// property and read back through a generated `init(depotRow:)` that assigns each property from
/// its column — no key path per row, no reflection. Relations are declared as on any entity
/// (`static let country = ToOne(…)` and `static var relations`).
///
/// Without an argument, the table is named like the type.
@attached(extension, conformances: Entity, names: named(schema), named(init(depotRow:)))
public macro Entity(_ table: String? = nil) = #externalMacro(module: "DepotMacros", type: "EntityMacro")

/// Marks the primary key of an `@Entity` (several properties: a composite key, in declaration order).
@attached(peer)
public macro PrimaryKey() = #externalMacro(module: "DepotMacros", type: "MarkerMacro")

/// Names the column of a property of an `@Entity`, when it differs from the property's name.
///
/// ```swift
/// @Column("is_online") var isOnline: Bool?
/// ```
@attached(peer)
public macro Column(_ name: String) = #externalMacro(module: "DepotMacros", type: "MarkerMacro")

/// Indexes the column of a property of an `@Entity`. Properties that pass the same `name` share
/// one composite index, in declaration order; without a name the index is the property's own,
/// named `<table>_<column>_idx`.
@attached(peer)
public macro Indexed(_ name: String? = nil) = #externalMacro(module: "DepotMacros", type: "MarkerMacro")

/// Makes the column of a property of an `@Entity` unique: a second row with the same value fails
/// with `.constraintViolation` on every store (NULLs do not collide). Properties that pass the
/// same `name` are unique together (a composite constraint, in declaration order); without a name
/// the constraint is named `<table>_<column>_key`.
@attached(peer)
public macro Unique(_ name: String? = nil) = #externalMacro(module: "DepotMacros", type: "MarkerMacro")

/// Leaves a stored property of an `@Entity` out of its table. It needs a default value, which
/// every value read from the store gets.
@attached(peer)
public macro Transient() = #externalMacro(module: "DepotMacros", type: "MarkerMacro")
