import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `UploadStore` must do, checked against each implementation.
@Suite struct UploadStoreContractTests {
    private func record(
        _ slot: String, owner: String = "romeo", size: Int = 10_000, created: Int = 1000, uploaded: Bool = false
    ) -> UploadRecord {
        UploadRecord(
            slotID: slot, owner: owner, filename: "Ünïcödé \(slot).jpg", size: size, contentType: "image/jpeg",
            created: created, isUploaded: uploaded)
    }

    @Test(arguments: StoresKind.allCases)
    func recordsRoundTrip(kind: StoresKind) throws {
        let uploads = try kind.makeStores(withAccounts: "romeo").uploads
        #expect(try uploads.upload("a") == nil)
        let original = record("a", size: 10 << 30, created: 1_700_000_000)
        #expect(try uploads.reserve(original, quota: 20 << 30) == nil)
        #expect(try uploads.upload("a") == original)
        #expect(try uploads.markUploaded("a"))
        #expect(try uploads.upload("a")?.isUploaded == true)
        #expect(try !uploads.markUploaded("missing"))
    }

    @Test(arguments: StoresKind.allCases)
    func theQuotaIsPerOwnerAndCountsEveryRecord(kind: StoresKind) throws {
        let uploads = try kind.makeStores(withAccounts: "romeo", "juliet").uploads
        #expect(try uploads.reserve(record("a", size: 5000), quota: 10_000) == nil)
        #expect(try uploads.markUploaded("a"))
        #expect(try uploads.reserve(record("b", size: 5000), quota: 10_000) == nil)
        #expect(try uploads.reserve(record("c", size: 1), quota: 10_000) == 10_000)
        #expect(try uploads.upload("c") == nil, "a refused slot is not kept")
        #expect(try uploads.reserve(record("d", owner: "juliet", size: 10_000), quota: 10_000) == nil)
        #expect(try uploads.usage(of: "romeo") == 10_000)
        #expect(try uploads.usage(of: "juliet") == 10_000)
        #expect(try uploads.usage(of: "nobody") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func smallAndEmptyFilesCountOneBlockEach(kind: StoresKind) throws {
        let uploads = try kind.makeStores(withAccounts: "romeo").uploads
        let block = UploadRecord.minimumQuotaCharge
        for (slot, size) in [("empty", 0), ("tiny", 1), ("block", block)] {
            #expect(try uploads.reserve(record(slot, size: size), quota: 3 * block) == nil)
        }
        #expect(try uploads.usage(of: "romeo") == 3 * block)
        #expect(try uploads.reserve(record("one more", size: 0), quota: 3 * block) == 3 * block)
    }

    @Test(arguments: StoresKind.allCases)
    func unknownOwnersAreRefused(kind: StoresKind) throws {
        let uploads = try kind.makeStores().uploads
        #expect(throws: UnknownAccountError(username: "romeo")) {
            try uploads.reserve(record("a"), quota: 1000)
        }
    }

    @Test(arguments: StoresKind.allCases)
    func expiryRemovesOldFilesAndUnusedSlots(kind: StoresKind) throws {
        let uploads = try kind.makeStores(withAccounts: "romeo").uploads
        #expect(try uploads.reserve(record("old", created: 100, uploaded: true), quota: 40_000) == nil)
        #expect(try uploads.reserve(record("unused", created: 500), quota: 40_000) == nil)
        #expect(try uploads.reserve(record("recent", created: 900), quota: 40_000) == nil)
        #expect(try uploads.reserve(record("kept", created: 500, uploaded: true), quota: 40_000) == nil)
        let removed = try uploads.removeExpired(createdBefore: 200, unusedCreatedBefore: 600)
        #expect(Set(removed) == ["old", "unused"])
        #expect(try uploads.existingSlots(["old", "unused", "recent", "kept", "never"]) == ["recent", "kept"])
        #expect(try uploads.usage(of: "romeo") == 20_000)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsRecords(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        #expect(try stores.uploads.reserve(record("a"), quota: 10_000) == nil)
        #expect(try stores.uploads.reserve(record("b", owner: "juliet"), quota: 10_000) == nil)
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.uploads.upload("a") == nil)
        #expect(try stores.uploads.existingSlots(["a", "b"]) == ["b"])
    }

    @Test(arguments: StoresKind.allCases)
    func anOwnersSlotsAreListed(kind: StoresKind) throws {
        let uploads = try kind.makeStores(withAccounts: "romeo", "juliet").uploads
        for (slot, owner) in [("a", "romeo"), ("b", "juliet"), ("c", "romeo")] {
            #expect(try uploads.reserve(record(slot, owner: owner), quota: 1 << 20) == nil)
        }
        #expect(try uploads.slots(of: "romeo").sorted() == ["a", "c"])
        #expect(try uploads.slots(of: "nobody") == [])
    }
}
