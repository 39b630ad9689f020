import XMPPCore
import XMPPStorage

extension PEP {
    /// Node configuration fields a client sent: in `<publish-options/>`
    /// (XEP-0060 §7.1.5: applied to a node the publish creates,
    /// preconditions on one that exists), or in a `pubsub#node_config`
    /// form (§8.2.4: the node's new configuration). A field left out, or
    /// sent without a value, stays as it is.
    struct ConfigurationFields: Sendable, Equatable {
        var accessModel: PEPNodeConfiguration.AccessModel?
        var maxItems: Int?
        var persistItems: Bool?
        var lastItemDelivery: PEPNodeConfiguration.LastItemDelivery?
        var notifyRetract: Bool?
        var deliverPayloads: Bool?
        var itemReply: PEPNodeConfiguration.ItemReply?
        var title: String?

        /// Fields whose values Swiftlet's nodes always have: asking for
        /// them holds; other values cannot be met.
        private static let fixed: [String: Set<String>] = [
            "pubsub#deliver_notifications": ["1", "true"],
            "pubsub#presence_based_delivery": ["1", "true"],
            "pubsub#publish_model": ["publishers"],
            "pubsub#notification_type": ["headline"],
            "pubsub#notify_delete": ["1", "true"],
        ]

        /// Fields a node does not keep, accepted when they are empty.
        private static let ignoredWhenEmpty: Set<String> = [
            "pubsub#description", "pubsub#type", "pubsub#roster_groups_allowed",
        ]

        /// The access models XEP-0060 defines that Swiftlet lacks.
        private static let unsupportedAccessModels: Set<String> = ["authorize", "roster"]

        /// No fields.
        init() {}

        /// Reads the form in `element` (`<publish-options/>` or
        /// `<configure/>`; none: no fields), of FORM_TYPE `formType`.
        ///
        /// - Parameter limits: `pep_max_items`, the largest
        ///   `pubsub#max_items`, which `max` stands for, and
        ///   `pep_max_name_size`, the longest title.
        /// - Throws: `StanzaError`: `bad-request` for a malformed form or
        ///   value, `not-acceptable` + `<unsupported feature='access-…'/>`
        ///   for an access model Swiftlet lacks or for a title too long, `conflict` +
        ///   `<precondition-not-met/>` (publish-options) or
        ///   `not-acceptable` (configuration) for a value it cannot honour.
        init(_ element: Element?, formType: String, limits: ServerConfig.Limits) throws(StanzaError) {
            guard let element, let form = element.child("x", namespace: NS.dataForms).flatMap(DataForm.init) else {
                return
            }
            guard form.formType == formType else {
                throw StanzaError(.badRequest, text: "the form's FORM_TYPE must be \(formType)")
            }
            let unmet: (String) -> StanzaError =
                formType == NS.pubsubPublishOptions
                ? { PEP.error(.conflict, "precondition-not-met", text: $0) } : { StanzaError(.notAcceptable, text: $0) }
            for field in form.fields where field.name != "FORM_TYPE" {
                let name = field.name ?? ""
                guard let value = field.values.first else {
                    if name == "pubsub#title" { title = "" }
                    continue
                }
                switch name {
                case "pubsub#access_model":
                    if Self.unsupportedAccessModels.contains(value) {
                        throw PEP.unsupported("access-" + value, .notAcceptable)
                    }
                    guard let model = PEPNodeConfiguration.AccessModel(rawValue: value) else {
                        throw StanzaError(.notAcceptable, text: "unknown access model '\(value)'")
                    }
                    accessModel = model
                case "pubsub#max_items":
                    maxItems = try Self.maxItems(value, limit: limits.pepMaxItems, unmet: unmet)
                case "pubsub#persist_items":
                    persistItems = try Self.boolean(value, name)
                case "pubsub#send_last_published_item":
                    lastItemDelivery = try Self.choice(value, name)
                case "pubsub#notify_retract":
                    notifyRetract = try Self.boolean(value, name)
                case "pubsub#deliver_payloads":
                    deliverPayloads = try Self.boolean(value, name)
                case "pubsub#itemreply":
                    itemReply = try Self.choice(value, name)
                case "pubsub#title":
                    try PEP.checkSize(value, of: "pubsub#title", limits: limits)
                    title = value
                default:
                    if Self.ignoredWhenEmpty.contains(name), value.isEmpty { continue }
                    guard Self.fixed[name]?.contains(value) == true else {
                        throw unmet("\(name) = '\(value)' is not supported")
                    }
                }
            }
        }

        /// `configuration` with these fields applied.
        func applied(to configuration: PEPNodeConfiguration) -> PEPNodeConfiguration {
            PEPNodeConfiguration(
                accessModel: accessModel ?? configuration.accessModel, maxItems: maxItems ?? configuration.maxItems,
                persistItems: persistItems ?? configuration.persistItems,
                lastItemDelivery: lastItemDelivery ?? configuration.lastItemDelivery,
                notifyRetract: notifyRetract ?? configuration.notifyRetract,
                deliverPayloads: deliverPayloads ?? configuration.deliverPayloads,
                itemReply: itemReply ?? configuration.itemReply, title: title ?? configuration.title)
        }

        /// Throws `conflict` + `<precondition-not-met/>` unless a node
        /// configured so meets these fields as preconditions (XEP-0060
        /// §7.1.5), naming the first that differs. `configuration` comes
        /// clamped to `pep_max_items`, so `max` (the limit) holds for a node
        /// at or above it.
        func checkMet(by configuration: PEPNodeConfiguration) throws(StanzaError) {
            let differing: [(String, Bool)] = [
                ("access_model", accessModel.map { $0 != configuration.accessModel } ?? false),
                ("max_items", maxItems.map { $0 != configuration.maxItems } ?? false),
                ("persist_items", persistItems.map { $0 != configuration.persistItems } ?? false),
                ("send_last_published_item", lastItemDelivery.map { $0 != configuration.lastItemDelivery } ?? false),
                ("notify_retract", notifyRetract.map { $0 != configuration.notifyRetract } ?? false),
                ("deliver_payloads", deliverPayloads.map { $0 != configuration.deliverPayloads } ?? false),
                ("itemreply", itemReply.map { $0 != configuration.itemReply } ?? false),
                ("title", title.map { $0 != configuration.title } ?? false),
            ]
            if let (name, _) = differing.first(where: \.1) {
                throw PEP.error(.conflict, "precondition-not-met", text: "the node's pubsub#\(name) differs")
            }
        }

        private static func maxItems(
            _ value: String, limit: Int, unmet: (String) -> StanzaError
        ) throws(StanzaError) -> Int {
            if value == "max" { return limit }
            guard let count = Int(value), count > 0 else {
                throw StanzaError(.badRequest, text: "pubsub#max_items must be a positive number or 'max'")
            }
            guard count <= limit else { throw unmet("a node keeps at most \(limit) items (pubsub#max_items 'max')") }
            return count
        }

        private static func boolean(_ value: String, _ name: String) throws(StanzaError) -> Bool {
            guard let boolean = DataForm.Field.booleanValue(value) else {
                throw StanzaError(.badRequest, text: "\(name) must be a boolean")
            }
            return boolean
        }

        private static func choice<Choice: RawRepresentable<String> & CaseIterable>(
            _ value: String, _ name: String
        ) throws(StanzaError) -> Choice {
            guard let choice = Choice(rawValue: value) else {
                let allowed = Choice.allCases.map(\.rawValue).joined(separator: ", ")
                throw StanzaError(.notAcceptable, text: "\(name) is one of \(allowed)")
            }
            return choice
        }
    }

    /// XEP-0060 §8.2: the owner's `<configure/>`: get answers the node's
    /// `pubsub#node_config` form, set applies a submitted one (a
    /// `cancel` form changes nothing).
    func configure(_ configure: Element, _ request: IQRequest) throws -> IQAnswer {
        let node = try Self.node(of: configure)
        let username = try request.username()
        let limits = request.server.config.limits
        guard request.iq.type == .set else {
            return .afterStorage({ stores in try stores.pep.configuration(of: node, owner: username) }) { found in
                guard let configuration = found else { throw StanzaError(.itemNotFound, text: "no such node") }
                var answer = Element("configure", namespace: NS.pubsubOwner, attributes: ["node": node])
                answer.append(Self.configurationForm(Self.clamped(configuration, limits: limits), maxItemsLimit: limits.pepMaxItems).element)
                return .result(Element("pubsub", namespace: NS.pubsubOwner, children: [.element(answer)]))
            }
        }
        guard let form = configure.child("x", namespace: NS.dataForms) else {
            throw StanzaError(.badRequest, text: "configure with a pubsub#node_config form")
        }
        let fields =
            form[attribute: "type"] == "cancel"
            ? ConfigurationFields() : try ConfigurationFields(configure, formType: NS.pubsubNodeConfig, limits: limits)
        return .afterStorage({ stores in
            try stores.inTransaction {
                guard let configuration = try stores.pep.configuration(of: node, owner: username) else {
                    throw StanzaError(.itemNotFound, text: "no such node")
                }
                let changed = fields.applied(to: Self.clamped(configuration, limits: limits))
                if changed != configuration { try stores.pep.setNode(node, of: username, configuration: changed) }
            }
        }) { .result() }
    }

    /// The `pubsub#node_config` form (XEP-0060 §16.4) of a node configured
    /// so: the fields Swiftlet keeps, and those whose value is fixed.
    static func configurationForm(_ configuration: PEPNodeConfiguration, maxItemsLimit: Int) -> DataForm {
        typealias Field = DataForm.Field
        func boolean(_ name: String, _ label: String, _ value: Bool) -> Field {
            .boolean("pubsub#" + name, label: label, value)
        }
        func list(_ name: String, _ label: String, _ value: String, _ options: [String]) -> Field {
            .listSingle("pubsub#" + name, label: label, value, options: options.map { ($0, $0) })
        }
        let bounds = Element("range", namespace: NS.dataFormsValidate, attributes: ["min": "1", "max": String(maxItemsLimit)])
        let range = Element(
            "validate", namespace: NS.dataFormsValidate, attributes: ["datatype": "pubsub:integer-or-max"],
            children: [.element(bounds)])
        let fields: [Field] = [
            Field("FORM_TYPE", type: "hidden", values: [NS.pubsubNodeConfig]),
            Field(
                "pubsub#title", type: "text-single", label: "Name of the node",
                values: configuration.title.isEmpty ? [] : [configuration.title]),
            Field(
                "pubsub#max_items", type: "text-single", label: "Items kept (at most \(maxItemsLimit), 'max' for that)",
                values: [String(configuration.maxItems)], extras: [range]),
            boolean("persist_items", "Keep items", configuration.persistItems),
            list(
                "access_model", "Who may read and subscribe", configuration.accessModel.rawValue,
                PEPNodeConfiguration.AccessModel.allCases.map(\.rawValue)),
            list("publish_model", "Who may publish", "publishers", ["publishers"]),
            list(
                "send_last_published_item", "When the last item goes to subscribers",
                configuration.lastItemDelivery.rawValue, PEPNodeConfiguration.LastItemDelivery.allCases.map(\.rawValue)),
            boolean("deliver_notifications", "Send notifications", true),
            boolean("deliver_payloads", "Notifications carry the items", configuration.deliverPayloads),
            list("notification_type", "Notification message type", "headline", ["headline"]),
            boolean("notify_delete", "Notify when the node is deleted", true),
            boolean("notify_retract", "Notify every removal of an item", configuration.notifyRetract),
            list(
                "itemreply", "Whose JID notifications name as publisher", configuration.itemReply.rawValue,
                PEPNodeConfiguration.ItemReply.allCases.map(\.rawValue)),
        ]
        return DataForm(type: "form", fields: fields)
    }
}
