import Testing

@testable import XMPPCore

/// Rotation and expiry of the ticket keys, on instants chosen by the test.
@Suite struct SessionTicketKeyRingTests {
    let start = ContinuousClock.now

    func ring() -> SessionTicketKeyRing {
        SessionTicketKeyRing(rotation: .seconds(3600), ticketLifetime: .seconds(7200))
    }

    @Test func oneKeySealsUntilTheRotationThenANewOne() {
        var ring = ring()
        let first = ring.sealingKey(at: start)
        #expect(first.name.count == 16 && first.cipherKey.count == 32 && first.macKey.count == 32)
        #expect(ring.sealingKey(at: start + .seconds(3599)).name == first.name)
        let second = ring.sealingKey(at: start + .seconds(3600))
        #expect(second.name != first.name)
        #expect(second.cipherKey != first.cipherKey && second.macKey != first.macKey)
        #expect(ring.keys.map(\.name) == [second.name, first.name])
    }

    @Test func theSealingKeyOpensWithoutRenewal() throws {
        var ring = ring()
        let key = ring.sealingKey(at: start)
        let found = ring.openingKey(named: key.name, at: start + .seconds(60))
        let opening = try #require(found)
        #expect(opening.key.cipherKey == key.cipherKey)
        #expect(!opening.renew)
    }

    /// A ticket sealed by a key that has since been replaced is still
    /// accepted, and replaced.
    @Test func anOlderKeyOpensAndAsksForANewTicket() throws {
        var ring = ring()
        let old = ring.sealingKey(at: start)
        _ = ring.sealingKey(at: start + .seconds(4000))
        let found = ring.openingKey(named: old.name, at: start + .seconds(4001))
        let opening = try #require(found)
        #expect(opening.key.macKey == old.macKey)
        #expect(opening.renew)
    }

    /// No ticket has been sealed since the newest key's hour ended: its
    /// tickets are renewed, by the next key, all the same.
    @Test func theNewestKeyPastItsHourAsksForANewTicket() throws {
        var ring = ring()
        let key = ring.sealingKey(at: start)
        let found = ring.openingKey(named: key.name, at: start + .seconds(3700))
        let opening = try #require(found)
        #expect(opening.renew)
    }

    /// A key opens tickets until the last ticket it could have sealed has
    /// expired: rotation plus ticket lifetime after it was made.
    @Test func aKeyIsForgottenOnceItsTicketsHaveExpired() {
        var ring = ring()
        let old = ring.sealingKey(at: start)
        _ = ring.sealingKey(at: start + .seconds(3600))
        let lastMoment = ring.openingKey(named: old.name, at: start + .seconds(10_799))
        #expect(lastMoment != nil)
        let tooLate = ring.openingKey(named: old.name, at: start + .seconds(10_800))
        #expect(tooLate == nil)
        #expect(ring.keys.count == 1, "the expired key is gone from memory")
    }

    @Test func anUnknownNameOpensNothing() {
        var ring = ring()
        let key = ring.sealingKey(at: start)
        var other = key.name
        other[15] ^= 1
        let oneBitOff = ring.openingKey(named: other, at: start)
        #expect(oneBitOff == nil)
        let zeros = ring.openingKey(named: [UInt8](repeating: 0, count: 16), at: start)
        #expect(zeros == nil)
    }

    /// A server idle for a day keeps no key, and makes a fresh one.
    @Test func afterALongIdleSpellOnlyAFreshKeyRemains() {
        var ring = ring()
        let old = ring.sealingKey(at: start)
        let fresh = ring.sealingKey(at: start + .seconds(86_400))
        #expect(fresh.name != old.name)
        #expect(ring.keys.map(\.name) == [fresh.name])
    }
}
