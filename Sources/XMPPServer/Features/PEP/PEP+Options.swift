import XMPPCore
import XMPPStorage

extension PEP {
    /// The node configuration a publish asks for in its `<publish-options/>`
    /// (XEP-0060 §7.1.5): applied to a node the publish creates,
    /// preconditions on one that exists.
    struct PublishOptions: Sendable, Equatable {
        var accessModel: PEPNodeConfiguration.AccessModel?
        var maxItems: Int?
        var persistItems: Bool?

        /// Options whose values Swiftlet's nodes always have: asking for
        /// them is a precondition that holds; other values cannot be met.
        private static let fixed: [String: Set<String>] = [
            "pubsub#deliver_notifications": ["1", "true"],
            "pubsub#deliver_payloads": ["1", "true"],
            "pubsub#presence_based_delivery": ["1", "true"],
            "pubsub#publish_model": ["publishers"],
            "pubsub#send_last_published_item": ["on_sub_and_presence"],
        ]

        /// The access models XEP-0060 defines that Swiftlet lacks.
        private static let unsupportedAccessModels: Set<String> = ["authorize", "roster", "whitelist"]

        /// No options.
        init() {}

        /// Reads `<publish-options/>` (none: no options).
        ///
        /// - Parameter maxItemsLimit: The largest `pubsub#max_items`, which
        ///   `max` stands for (`pep_max_items`).
        /// - Throws: `StanzaError`: `bad-request` for a malformed form or
        ///   value, `not-acceptable` + `<unsupported feature='access-…'/>`
        ///   for an access model Swiftlet lacks, `conflict` +
        ///   `<precondition-not-met/>` for an option it cannot honour.
        init(_ element: Element?, maxItemsLimit: Int) throws(StanzaError) {
            guard let element, let form = element.child("x", namespace: NS.dataForms).flatMap(DataForm.init) else {
                return
            }
            guard form.formType == NS.pubsubPublishOptions else {
                throw StanzaError(.badRequest, text: "publish-options need FORM_TYPE \(NS.pubsubPublishOptions)")
            }
            for field in form.fields where field.name != "FORM_TYPE" {
                let name = field.name ?? ""
                let value = field.values.first ?? ""
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
                    maxItems = try Self.maxItems(value, limit: maxItemsLimit)
                case "pubsub#persist_items":
                    persistItems = try Self.boolean(value, name)
                default:
                    guard Self.fixed[name]?.contains(value) == true else {
                        throw PEP.error(.conflict, "precondition-not-met", text: "\(name) = '\(value)' is not supported")
                    }
                }
            }
        }

        /// `configuration` with these options applied.
        func applied(to configuration: PEPNodeConfiguration) -> PEPNodeConfiguration {
            PEPNodeConfiguration(
                accessModel: accessModel ?? configuration.accessModel, maxItems: maxItems ?? configuration.maxItems,
                persistItems: persistItems ?? configuration.persistItems)
        }

        /// Whether a node configured so meets these options as
        /// preconditions (XEP-0060 §7.1.5).
        func areMet(by configuration: PEPNodeConfiguration) -> Bool {
            applied(to: configuration) == configuration
        }

        private static func maxItems(_ value: String, limit: Int) throws(StanzaError) -> Int {
            if value == "max" { return limit }
            guard let count = Int(value), count > 0 else {
                throw StanzaError(.badRequest, text: "pubsub#max_items must be a positive number or 'max'")
            }
            guard count <= limit else {
                throw PEP.error(.conflict, "precondition-not-met", text: "a node keeps at most \(limit) items")
            }
            return count
        }

        private static func boolean(_ value: String, _ name: String) throws(StanzaError) -> Bool {
            switch value {
            case "1", "true": return true
            case "0", "false": return false
            default: throw StanzaError(.badRequest, text: "\(name) must be a boolean")
            }
        }
    }
}
