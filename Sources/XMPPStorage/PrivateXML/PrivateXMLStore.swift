/// The private XML of the server's users (XEP-0049: `jabber:iq:private`):
/// per account, at most one element for each qualified name (namespace and
/// local name), kept serialized.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames, namespaces and names are compared byte for byte. An unknown
/// username reads as an account without private XML;
/// `setElement(_:namespace:name:of:)` throws `UnknownAccountError` for it.
/// Deleting the account deletes its private XML.
public protocol PrivateXMLStore: AnyObject {
    /// The stored element `name` in `namespace` of `username`, serialized,
    /// or nil when none is stored.
    func element(namespace: String, name: String, of username: String) throws -> String?

    /// Stores `xml` as the element `name` in `namespace` of `username`,
    /// replacing the one stored before.
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func setElement(_ xml: String, namespace: String, name: String, of username: String) throws

    /// Removes the element `name` in `namespace` of `username`, if any.
    func removeElement(namespace: String, name: String, of username: String) throws

    /// How many elements `username` has stored (0 for an unknown account).
    func elementCount(of username: String) throws -> Int
}
