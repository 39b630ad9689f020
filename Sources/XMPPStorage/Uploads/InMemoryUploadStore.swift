/// An `UploadStore` in a dictionary, for tests and for servers that need
/// nothing to survive a restart. `Stores(accounts:)` deletes a user's
/// records with the account.
public final class InMemoryUploadStore: UploadStore, AccountScopedStore {
    private let accounts: any AccountStore
    private var records: [String: UploadRecord] = [:]

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        self.accounts = accounts
    }

    public func reserve(_ record: UploadRecord, quota: Int) throws -> Int? {
        guard try accounts.accountExists(record.owner) else {
            throw UnknownAccountError(username: record.owner)
        }
        let used = usage(of: record.owner)
        guard used + record.quotaCharge <= quota else { return used }
        records[record.slotID] = record
        return nil
    }

    public func upload(_ slotID: String) -> UploadRecord? {
        records[slotID]
    }

    public func markUploaded(_ slotID: String) -> Bool {
        guard records[slotID] != nil else { return false }
        records[slotID]?.isUploaded = true
        return true
    }

    public func usage(of username: String) -> Int {
        let owner = Array(username.utf8)
        return records.values.reduce(0) { $0 + (Array($1.owner.utf8) == owner ? $1.quotaCharge : 0) }
    }

    public func slots(of username: String) -> [String] {
        let owner = Array(username.utf8)
        return records.values.filter { Array($0.owner.utf8) == owner }.map(\.slotID)
    }

    public func removeExpired(createdBefore cutoff: Int, unusedCreatedBefore unusedCutoff: Int) -> [String] {
        let expired = records.values.filter { $0.created < cutoff || (!$0.isUploaded && $0.created < unusedCutoff) }
        for record in expired { records[record.slotID] = nil }
        return expired.map(\.slotID)
    }

    public func existingSlots(_ slotIDs: [String]) -> Set<String> {
        Set(slotIDs.filter { records[$0] != nil })
    }

    /// Forgets the records of a deleted account.
    func removeAll(of username: String) {
        let owner = Array(username.utf8)
        records = records.filter { Array($0.value.owner.utf8) != owner }
    }
}
