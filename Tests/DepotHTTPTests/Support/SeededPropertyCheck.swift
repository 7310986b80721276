import Foundation
import PropertyBased
import Testing

/// The seed a seeded property check draws from: `DEPOT_FUZZ_SEED` when set (to rerun a failure
/// or try other inputs), else the test's own fixed seed.
func fuzzSeed(default fixed: UInt64) -> UInt64 {
    ProcessInfo.processInfo.environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? fixed
}

/// Calls `body` with `count` inputs drawn from `input` by a generator seeded with `seed`: the same
/// inputs on every run, so that a failure is one a rerun shows again (PropertyBased's
/// `propertyCheck` draws new ones each time, and its fixed-seed trait runs a single case).
///
/// `body` gets a label naming the seed and the case (`seed 20261126, case 17 of 2000; rerun with
/// DEPOT_FUZZ_SEED=20261126`) for the messages of its expectations; an error it throws is
/// recorded with that label.
func seededPropertyCheck<Value>(
    seed: UInt64, count: Int, input: Generator<Value, some Sequence>,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (_ value: Value, _ label: String) async throws -> Void
) async {
    var random = Xoshiro(seed: SplitMix.expand(seed))
    for index in 0..<count {
        let value = input.run(using: &random)
        let label = "seed \(seed), case \(index + 1) of \(count); rerun with DEPOT_FUZZ_SEED=\(seed)"
        do {
            try await body(value, label)
        } catch {
            Issue.record(error, "\(label)", sourceLocation: sourceLocation)
        }
    }
}

/// SplitMix64, which spreads one 64-bit seed over the four words of Xoshiro's state (all zeros
/// would be a stuck state).
private enum SplitMix {
    static func expand(_ seed: UInt64) -> (UInt64, UInt64, UInt64, UInt64) {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (next(), next(), next(), next())
    }
}
