/// Every XML namespace Swiftlet speaks, in one place, so a URI is typed once
/// and a misspelling is a compile error rather than a silent mismatch.
///
/// Grouped by the specification that defines them; each constant's name is
/// the short name used for it throughout the code (`NS.ping`, `NS.mam`).
public enum NS {
    // MARK: RFC 6120, XMPP Core

    /// The stream wrapper, `<stream:stream>`, `<stream:features>` and
    /// `<stream:error>` (RFC 6120 §4.8.1).
    public static let streams = "http://etherx.jabber.org/streams"
    /// The default content namespace of client-to-server streams (RFC 6120 §4.8.3).
    public static let client = "jabber:client"
    /// The default content namespace of server-to-server streams (RFC 6120 §4.8.3).
    public static let server = "jabber:server"
    /// The default content namespace of external component streams (XEP-0114 §3).
    public static let componentAccept = "jabber:component:accept"
    /// STARTTLS negotiation (RFC 6120 §5.4).
    public static let tls = "urn:ietf:params:xml:ns:xmpp-tls"
    /// SASL negotiation (RFC 6120 §6.4).
    public static let sasl = "urn:ietf:params:xml:ns:xmpp-sasl"
    /// Resource binding (RFC 6120 §7).
    public static let bind = "urn:ietf:params:xml:ns:xmpp-bind"
    /// Extensible SASL Profile, "SASL2" (XEP-0388).
    public static let sasl2 = "urn:xmpp:sasl:2"
    /// Bind 2, resource binding inside SASL2 (XEP-0386).
    public static let bind2 = "urn:xmpp:bind:0"
    /// Fast Authentication Streamlining Tokens (XEP-0484).
    public static let fast = "urn:xmpp:fast:0"
    /// The channel-binding types a server supports (XEP-0440).
    public static let saslChannelBinding = "urn:xmpp:sasl-cb:0"
    /// The defined conditions of stanza errors (RFC 6120 §8.3.3).
    public static let stanzas = "urn:ietf:params:xml:ns:xmpp-stanzas"
    /// The defined conditions of stream errors (RFC 6120 §4.9.3).
    public static let streamErrors = "urn:ietf:params:xml:ns:xmpp-streams"
    /// The namespace bound to the `xml:` prefix, for `xml:lang`
    /// (Namespaces in XML 1.0 §3; RFC 6120 §4.7.4).
    public static let xml = "http://www.w3.org/XML/1998/namespace"

    // MARK: RFC 7395, XMPP over WebSocket

    /// `<open/>` and `<close/>`, which begin and end a stream over
    /// WebSocket in place of `<stream:stream>` (RFC 7395 §3.3.2).
    public static let framing = "urn:ietf:params:xml:ns:xmpp-framing"

    // MARK: RFC 6121 and its predecessor

    /// Session establishment, removed by RFC 6121 but still sent by old
    /// clients such as XMPPFramework (RFC 3921 §3).
    public static let session = "urn:ietf:params:xml:ns:xmpp-session"
    /// Roster management (RFC 6121 §2).
    public static let roster = "jabber:iq:roster"
    /// The stream feature advertising roster versioning (RFC 6121 §2.6.1).
    public static let rosterVersioning = "urn:xmpp:features:rosterver"
    /// RFC 6121 §3.4: subscription pre-approval stream feature.
    public static let preApproval = "urn:xmpp:features:pre-approval"

    // MARK: XEPs

    /// XEP-0004: Data Forms.
    public static let dataForms = "jabber:x:data"
    /// XEP-0012: Last Activity.
    public static let last = "jabber:iq:last"
    /// XEP-0030: Service Discovery, information queries.
    public static let discoInfo = "http://jabber.org/protocol/disco#info"
    /// XEP-0030: Service Discovery, item queries.
    public static let discoItems = "http://jabber.org/protocol/disco#items"
    /// XEP-0050: Ad-Hoc Commands, the `<command/>` element and the disco
    /// node that lists the commands.
    public static let commands = "http://jabber.org/protocol/commands"
    /// XEP-0133: Service Administration, the FORM_TYPE of its forms and
    /// the prefix of its command nodes (`…#add-user`).
    public static let admin = "http://jabber.org/protocol/admin"
    /// XEP-0048: Bookmarks, the `<storage/>` element kept in private XML.
    public static let bookmarksLegacy = "storage:bookmarks"
    /// XEP-0045: Multi-User Chat, the join request's `<x/>`.
    public static let muc = "http://jabber.org/protocol/muc"
    /// XEP-0045: Multi-User Chat, what the room tells occupants (`<x/>`
    /// with `<item/>` and `<status/>`).
    public static let mucUser = "http://jabber.org/protocol/muc#user"
    /// XEP-0045 §10: an owner's configuration of a room.
    public static let mucOwner = "http://jabber.org/protocol/muc#owner"
    /// XEP-0045 §9: moderators' and admins' changes of roles and
    /// affiliations.
    public static let mucAdmin = "http://jabber.org/protocol/muc#admin"
    /// XEP-0045 §10.2: the FORM_TYPE of a room's configuration form.
    public static let mucRoomConfig = "http://jabber.org/protocol/muc#roomconfig"
    /// XEP-0045 §6.4: the FORM_TYPE of a room's extended disco#info.
    public static let mucRoomInfo = "http://jabber.org/protocol/muc#roominfo"
    /// XEP-0045 §7.10: the FORM_TYPE of a room's registration form.
    public static let mucRegister = "http://jabber.org/protocol/muc#register"
    /// XEP-0249: Direct MUC Invitations.
    public static let conferenceInvitation = "jabber:x:conference"
    /// XEP-0049: Private XML Storage.
    public static let privateStorage = "jabber:iq:private"
    /// XEP-0054: vcard-temp.
    public static let vcard = "vcard-temp"
    /// XEP-0059: Result Set Management.
    public static let rsm = "http://jabber.org/protocol/rsm"
    /// XEP-0060: Publish-Subscribe, the requests of subscribers and publishers.
    public static let pubsub = "http://jabber.org/protocol/pubsub"
    /// XEP-0060: Publish-Subscribe, event notifications.
    public static let pubsubEvent = "http://jabber.org/protocol/pubsub#event"
    /// XEP-0060: Publish-Subscribe, the requests of node owners.
    public static let pubsubOwner = "http://jabber.org/protocol/pubsub#owner"
    /// XEP-0060: Publish-Subscribe, application-specific error conditions.
    public static let pubsubErrors = "http://jabber.org/protocol/pubsub#errors"
    /// XEP-0060: Publish-Subscribe, the `FORM_TYPE` of publish options (§7.1.5).
    public static let pubsubPublishOptions = "http://jabber.org/protocol/pubsub#publish-options"
    /// XEP-0060: Publish-Subscribe, the `FORM_TYPE` of node configuration (§16.4).
    public static let pubsubNodeConfig = "http://jabber.org/protocol/pubsub#node_config"
    /// XEP-0066: Out of Band Data, the `<x/>` element carrying a URL.
    public static let oob = "jabber:x:oob"
    /// XEP-0077: In-Band Registration, the query.
    public static let register = "jabber:iq:register"
    /// XEP-0077: In-Band Registration, the stream feature.
    public static let registerFeature = "http://jabber.org/features/iq-register"
    /// XEP-0084: User Avatar, the node of the image data.
    public static let avatarData = "urn:xmpp:avatar:data"
    /// XEP-0084: User Avatar, the node of the image metadata.
    public static let avatarMetadata = "urn:xmpp:avatar:metadata"
    /// XEP-0085: Chat State Notifications.
    public static let chatstates = "http://jabber.org/protocol/chatstates"
    /// XEP-0092: Software Version.
    public static let version = "jabber:iq:version"
    /// XEP-0115: Entity Capabilities.
    public static let caps = "http://jabber.org/protocol/caps"
    /// XEP-0122: Data Forms Validation.
    public static let dataFormsValidate = "http://jabber.org/protocol/xdata-validate"
    /// XEP-0136: Message Archiving. Not implemented; XMPPFramework asks for
    /// its preferences and must get an error back.
    public static let archive = "urn:xmpp:archive"
    /// XEP-0153: vCard-Based Avatars, the presence `<x/>` element.
    public static let vcardUpdate = "vcard-temp:x:update"
    /// XEP-0157: Contact Addresses for XMPP Services, the `FORM_TYPE` of
    /// the addresses in the server's disco#info.
    public static let serverInfo = "http://jabber.org/network/serverinfo"
    /// XEP-0184: Message Delivery Receipts.
    public static let receipts = "urn:xmpp:receipts"
    /// XEP-0191: Blocking Command.
    public static let blocking = "urn:xmpp:blocking"
    /// XEP-0191: Blocking Command, the application error `<blocked/>`.
    public static let blockingErrors = "urn:xmpp:blocking:errors"
    /// XEP-0198: Stream Management, version 3.
    public static let sm = "urn:xmpp:sm:3"
    /// XEP-0199: XMPP Ping.
    public static let ping = "urn:xmpp:ping"
    /// XEP-0202: Entity Time.
    public static let time = "urn:xmpp:time"
    /// XEP-0203: Delayed Delivery.
    public static let delay = "urn:xmpp:delay"
    /// XEP-0215: External Service Discovery, version 2.
    public static let extdisco = "urn:xmpp:extdisco:2"
    /// XEP-0280: Message Carbons, version 2.
    public static let carbons = "urn:xmpp:carbons:2"
    /// XEP-0297: Stanza Forwarding.
    public static let forward = "urn:xmpp:forward:0"
    /// XEP-0313: Message Archive Management, version 2.
    public static let mam = "urn:xmpp:mam:2"
    /// XEP-0334: Message Processing Hints (`<no-copy/>`, `<no-store/>`, `<no-permanent-store/>`).
    public static let hints = "urn:xmpp:hints"
    /// XEP-0352: Client State Indication.
    public static let csi = "urn:xmpp:csi:0"
    /// XEP-0357: Push Notifications (`<enable/>`, `<disable/>`, `<notification/>`).
    public static let push = "urn:xmpp:push:0"
    /// XEP-0357: Push Notifications, the `FORM_TYPE` of a notification's summary.
    public static let pushSummary = "urn:xmpp:push:summary"
    /// XEP-0359: Unique and Stable Stanza IDs (`<stanza-id/>`, `<origin-id/>`).
    public static let stanzaID = "urn:xmpp:sid:0"
    /// XEP-0363: HTTP File Upload, current namespace.
    public static let httpUpload = "urn:xmpp:http:upload:0"
    /// XEP-0363: HTTP File Upload, the namespace of versions before 0.3.
    ///
    /// COMPAT: XMPPFramework: still sends it (child elements, not attributes).
    public static let httpUploadLegacy = "urn:xmpp:http:upload"
    /// XEP-0398: User Avatar to vCard-Based Avatars Conversion, the
    /// account feature.
    public static let pepVCardConversion = "urn:xmpp:pep-vcard-conversion:0"
    /// XEP-0421: Anonymous unique occupant identifiers for MUCs.
    public static let occupantID = "urn:xmpp:occupant-id:0"
    /// XEP-0424: Message Retraction, version 1.
    public static let messageRetract = "urn:xmpp:message-retract:1"
    /// XEP-0425: Moderated Message Retraction, version 1.
    public static let messageModerate = "urn:xmpp:message-moderate:1"
    /// XEP-0402: PEP Native Bookmarks, the node and payload namespace.
    public static let bookmarks = "urn:xmpp:bookmarks:1"
}
