import XMPPCore
import XMPPStorage

/// An item was stored in a PEP node (XEP-0163) and its notifications
/// sent: by the owner's own `<publish/>`, or by PEP for a
/// `PEPPublishRequest`. Features that keep the same data in an older form
/// (a vCard photo, XEP-0048 bookmarks) observe it to convert.
public struct PEPItemPublished: ServerEvent {
    /// The owner's bare JID.
    public let owner: JID
    /// The node's name.
    public let node: String
    /// The `<item id='…'>` with its payload.
    public let item: Element
    /// Whether PEP published it for a `PEPPublishRequest`: a converting
    /// feature ignores these, which it caused itself.
    public let onBehalf: Bool
    /// The owner's session the change came from.
    public let session: ClientSession
}

/// An item was removed from a PEP node by its owner's `<retract/>` (or
/// for a `PEPRetractRequest`), or with every other item of the node by
/// the owner's `<purge/>` or `<delete/>` (one event per item); its
/// notifications have been sent.
public struct PEPItemRetracted: ServerEvent {
    /// The owner's bare JID.
    public let owner: JID
    /// The node's name.
    public let node: String
    /// The removed item's id.
    public let itemID: String
    /// Whether PEP retracted it for a `PEPRetractRequest`; false for the
    /// owner's own requests, purge and delete included.
    public let onBehalf: Bool
    /// The owner's session the change came from.
    public let session: ClientSession
}

/// Asks PEP to publish on the owner's behalf, because the same data
/// changed in another form: PEP creates the node with `configuration`
/// when it does not exist (or gives it to the node that exists, with
/// `enforcesConfiguration`), stores the item, notifies as for the owner's
/// own publish, and fires `PEPItemPublished` with `onBehalf`.
public struct PEPPublishRequest: ServerEvent {
    /// The owner's bare JID.
    public let owner: JID
    /// The node's name.
    public let node: String
    /// The `<item id='…'>` with its payload.
    public let item: Element
    /// The node's configuration if PEP has to create it.
    public let configuration: PEPNodeConfiguration
    /// Whether an existing node is first given `configuration`, whatever
    /// a client created it with: for data that must stay private (XEP-0048
    /// and XEP-0402 bookmarks hold room passwords).
    public let enforcesConfiguration: Bool
    /// The owner's session the change came from.
    public let session: ClientSession

    /// A request from its parts.
    public init(
        owner: JID, node: String, item: Element, configuration: PEPNodeConfiguration,
        enforcesConfiguration: Bool = false, session: ClientSession
    ) {
        self.owner = owner
        self.node = node
        self.item = item
        self.configuration = configuration
        self.enforcesConfiguration = enforcesConfiguration
        self.session = session
    }
}

/// Asks PEP to retract an item on the owner's behalf (the counterpart of
/// `PEPPublishRequest`), with notifications; nothing happens if there is
/// no such item.
public struct PEPRetractRequest: ServerEvent {
    /// The owner's bare JID.
    public let owner: JID
    /// The node's name.
    public let node: String
    /// The item's id.
    public let itemID: String
    /// The owner's session the change came from.
    public let session: ClientSession

    /// A request from its parts.
    public init(owner: JID, node: String, itemID: String, session: ClientSession) {
        self.owner = owner
        self.node = node
        self.itemID = itemID
        self.session = session
    }
}
