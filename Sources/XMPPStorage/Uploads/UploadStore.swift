/// One file upload (XEP-0363): a slot handed out to a user, and once the
/// file arrived, the file's metadata. The file itself lives on disk, under
/// the slot's id.
public struct UploadRecord: Sendable, Hashable {
    /// The slot's random id, which the URLs carry.
    public var slotID: String
    /// The user who asked for the slot (a username, the localpart).
    public var owner: String
    /// The file name the client gave.
    public var filename: String
    /// The announced size in bytes; the upload must have exactly this many.
    public var size: Int
    /// The MIME type served with the file.
    public var contentType: String
    /// When the slot was handed out, in seconds since 1970 (UTC).
    public var created: Int
    /// Whether the file has arrived completely.
    public var isUploaded: Bool

    /// The least a record counts toward its owner's quota, in bytes: one
    /// filesystem block. Even an empty file takes a directory and a file
    /// on disk; counted by size alone, small and empty files would be free
    /// and a user could make inodes without bound.
    public static let minimumQuotaCharge = 4096

    /// What the record counts toward its owner's quota: its size, but at
    /// least ``minimumQuotaCharge``.
    public var quotaCharge: Int { max(size, Self.minimumQuotaCharge) }

    /// Creates a record.
    public init(
        slotID: String, owner: String, filename: String, size: Int, contentType: String, created: Int,
        isUploaded: Bool = false
    ) {
        self.slotID = slotID
        self.owner = owner
        self.filename = filename
        self.size = size
        self.contentType = contentType
        self.created = created
        self.isUploaded = isUploaded
    }
}

/// The uploads of the server's users (XEP-0363): what each user has
/// uploaded or may upload, for the quota, the expiry and the downloads.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Deleting an account deletes its records (the files go with the next
/// purge, which removes files that have no record).
public protocol UploadStore: AnyObject {
    /// Adds `record` unless its owner's records, with it, would be charged
    /// more than `quota` bytes (each its `quotaCharge`), checked and added
    /// in one step.
    ///
    /// - Returns: nil when added; otherwise the bytes the owner already
    ///   holds, for the error message.
    /// - Throws: `UnknownAccountError` if there is no account `record.owner`.
    func reserve(_ record: UploadRecord, quota: Int) throws -> Int?

    /// The record of `slotID`, or nil.
    func upload(_ slotID: String) throws -> UploadRecord?

    /// Marks the file of `slotID` as arrived; false when there is no such
    /// record (it expired, or its account was deleted).
    func markUploaded(_ slotID: String) throws -> Bool

    /// The bytes `username`'s records are charged, uploaded files and
    /// unused slots alike: the sum of their `quotaCharge`.
    func usage(of username: String) throws -> Int

    /// The slot ids of `username`'s records, so that their files can go
    /// with the account (the records go by themselves when it is deleted).
    func slots(of username: String) throws -> [String]

    /// Removes the records created before `cutoff` and the unused ones
    /// (slots never uploaded to) created before `unusedCutoff`, both in
    /// seconds since 1970.
    ///
    /// - Returns: The slot ids removed.
    func removeExpired(createdBefore cutoff: Int, unusedCreatedBefore unusedCutoff: Int) throws -> [String]

    /// Which of `slotIDs` have a record.
    func existingSlots(_ slotIDs: [String]) throws -> Set<String>
}
