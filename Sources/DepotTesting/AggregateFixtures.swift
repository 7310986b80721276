import Depot
import Foundation

/// An order line for the aggregate cases of ``StoreConformance``: integers, an optional integer,
/// exact decimals, doubles, dates, text with NULLs and UUIDs, over ``TestOrder/sample``.
#if DEPOT_MACRO_FIXTURES
    @Entity("orders")
#endif
public struct TestOrder: Entity, Equatable, Hashable {
    /// The order number: the primary key.
    @PrimaryKey public var id: Int
    /// Who ordered; several orders share a customer.
    public var customer: String
    /// The sales region; `nil` for some orders (a group of its own).
    public var region: String?
    /// How many items.
    public var quantity: Int
    /// A discount in whole units; `nil` when none was given.
    public var discount: Int?
    /// The amount, exact: sums such as 0.1 + 0.2 must be 0.3.
    public var total: Decimal
    /// The weight in kilograms.
    public var weight: Double
    /// When it was placed.
    public var placed: Date
    /// A tracking number, when shipped.
    public var tracking: UUID?

    /// An order; the optional fields default to `nil`.
    public init(
        id: Int, customer: String, region: String? = nil, quantity: Int, discount: Int? = nil, total: Decimal,
        weight: Double, placed: Date, tracking: UUID? = nil
    ) {
        self.id = id
        self.customer = customer
        self.region = region
        self.quantity = quantity
        self.discount = discount
        self.total = total
        self.weight = weight
        self.placed = placed
        self.tracking = tracking
    }

    #if !DEPOT_MACRO_FIXTURES
        /// Table `orders`, keyed by `id`.
        public static let schema = Schema<TestOrder>("orders", primaryKey: \.id) {
            Column(\.id, "id")
            Column(\.customer, "customer")
            Column(\.region, "region")
            Column(\.quantity, "quantity")
            Column(\.discount, "discount")
            Column(\.total, "total")
            Column(\.weight, "weight")
            Column(\.placed, "placed")
            Column(\.tracking, "tracking")
        }
    #endif

    /// Nine orders of four customers in two regions and none: decimals whose exact sums differ
    /// from their floating-point ones, a decimal that orders differently as text ("10.5" < "9.99"),
    /// text in byte order ("Zed" < "ada" < "Örjan"), NULL regions, discounts and tracking numbers.
    public static let sample: [TestOrder] = {
        func day(_ offset: Double) -> Date { Date(timeIntervalSinceReferenceDate: 800_000_000 + offset * 86_400) }
        func uuid(_ text: String) -> UUID? { UUID(uuidString: text) }
        func exact(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? 0 }
        return [
            TestOrder(
                id: 1, customer: "ada", region: "north", quantity: 3, discount: 1, total: exact("0.1"),
                weight: 1.5, placed: day(0), tracking: uuid("00000000-0000-0000-0000-0000000000FF")),
            TestOrder(
                id: 2, customer: "ada", region: "north", quantity: 1, total: exact("0.2"), weight: 0.25,
                placed: day(1)),
            TestOrder(
                id: 3, customer: "Zed", region: "south", quantity: 7, discount: 0, total: exact("9.99"),
                weight: 2, placed: day(-3), tracking: uuid("F0000000-0000-0000-0000-000000000000")),
            TestOrder(
                id: 4, customer: "Zed", region: "south", quantity: 2, discount: 5, total: exact("10.5"),
                weight: 0.125, placed: day(2), tracking: uuid("0F000000-0000-0000-0000-000000000000")),
            TestOrder(
                id: 5, customer: "Örjan", region: nil, quantity: 4, total: exact("-3.33"), weight: 4,
                placed: day(5)),
            TestOrder(
                id: 6, customer: "Örjan", region: "north", quantity: 10, discount: 2,
                total: exact("123456789012345678.9"), weight: 8.5, placed: day(4)),
            TestOrder(
                id: 7, customer: "bo", region: nil, quantity: 0, total: exact("0.3"), weight: 0,
                placed: day(3)),
            TestOrder(
                id: 8, customer: "bo", region: "south", quantity: -2, discount: 3, total: exact("7"),
                weight: 3.75, placed: day(-1)),
            TestOrder(
                id: 9, customer: "ada", region: "south", quantity: 5, total: exact("0.01"), weight: 1,
                placed: day(6)),
        ]
    }()
}
