/// A XEP-0004 data form (`<x xmlns='jabber:x:data'/>`): its type and
/// fields, read from a stanza or written into one.
///
/// Only what protocols that carry forms need (MAM queries, their form
/// template, node configuration); labels are written but not read, and
/// options and instructions are not kept.
public struct DataForm: Sendable, Hashable {
    /// One `<field/>`.
    public struct Field: Sendable, Hashable {
        /// The `var` attribute; `nil` only for fixed fields.
        public var name: String?
        /// The `type` attribute, which submitted forms may leave out
        /// (XEP-0004: "text-single" is then assumed).
        public var type: String?
        /// The `label` attribute, for a form a person fills in.
        public var label: String?
        /// The `<value/>` texts, in order.
        public var values: [String]
        /// Extra children written after the values, such as XEP-0122
        /// `<validate/>` or the `<option/>`s of a list.
        public var extras: [Element]

        /// Creates a field.
        public init(
            _ name: String?, type: String? = nil, label: String? = nil, values: [String] = [], extras: [Element] = []
        ) {
            self.name = name
            self.type = type
            self.label = label
            self.values = values
            self.extras = extras
        }
    }

    /// The form's `type`: `form`, `submit`, `cancel` or `result`.
    public var type: String?
    /// The fields in document order.
    public var fields: [Field]

    /// Creates a form.
    public init(type: String?, fields: [Field]) {
        self.type = type
        self.fields = fields
    }

    /// Reads `element` if it is an `<x/>` in `jabber:x:data`.
    public init?(_ element: Element) {
        guard element.name == "x", element.namespace == NS.dataForms else { return nil }
        type = element[attribute: "type"]
        fields = element.elements.filter { $0.name == "field" && $0.namespace == NS.dataForms }.map { field in
            Field(
                field[attribute: "var"], type: field[attribute: "type"],
                values: field.elements.filter { $0.name == "value" && $0.namespace == NS.dataForms }.map(\.text))
        }
    }

    /// The value of the hidden `FORM_TYPE` field (XEP-0068), if any.
    public var formType: String? {
        fields.first { $0.name == "FORM_TYPE" }?.values.first
    }

    /// The `<x/>` element.
    public var element: Element {
        var form = Element("x", namespace: NS.dataForms)
        form[attribute: "type"] = type
        for field in fields {
            var child = Element("field", namespace: NS.dataForms)
            child[attribute: "var"] = field.name
            child[attribute: "type"] = field.type
            child[attribute: "label"] = field.label
            for value in field.values {
                child.append(Element("value", namespace: NS.dataForms, children: [.text(value)]))
            }
            for extra in field.extras { child.append(extra) }
            form.append(child)
        }
        return form
    }
}
