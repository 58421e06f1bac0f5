/// `org.freedesktop.DBus.Properties` and `org.freedesktop.DBus.Introspectable` on every object.
extension SecretServiceObjects {
    func properties(_ call: BusCall, reply: BusWriter) throws(BusError) {
        let target = try target(of: call.path)
        let arguments = call.arguments
        switch call.member {
        case "Get":
            let interface = try arguments.string()
            let name = try arguments.string()
            guard let value = try properties(of: target, interface: interface).first(where: { $0.0 == name })?.1 else {
                throw .invalidArguments("no property \(name) in \(interface)")
            }
            try reply.variant(value)
        case "GetAll":
            let interface = try arguments.string()
            try reply.properties(try properties(of: target, interface: interface))
        case "Set":
            let interface = try arguments.string()
            let name = try arguments.string()
            let value = try arguments.variant()
            switch (target, interface, name, value) {
            case (.item(let collection, let id), Self.itemInterface, "Label", .string(let label)):
                try change(collection, id, label: label)
            case (.item(let collection, let id), Self.itemInterface, "Attributes", .stringMap(let attributes)):
                try change(collection, id, attributes: attributes)
                if collection != Self.session { try foldSameAttributeSets() }
            case (.collection(let collection), Self.collectionInterface, "Label", .string(let label)):
                try setLabel(label, ofCollection: collection)
            default:
                throw .invalidArguments("\(name) of \(interface) cannot be set to a \(value.signature) here")
            }
        default:
            throw .unknownMethod(Self.propertiesInterface, call.member)
        }
    }

    private func properties(of target: Target, interface: String) throws(BusError) -> [(String, BusValue)] {
        switch target {
        case .service where interface == Self.serviceInterface:
            return [("Collections", .objectPaths(collectionNames().map { Self.path(collection: $0) }))]
        case .collection(let name) where interface == Self.collectionInterface:
            return collectionProperties(name)
        case .item(let collection, let id) where interface == Self.itemInterface:
            return try itemProperties(collection, id)
        case .session, .prompt:
            return []
        default:
            throw .invalidArguments("no interface \(interface) here")
        }
    }

    func introspection(of path: String) throws(BusError) -> String {
        let interfaces: [String]
        var children: [String] = []
        switch try? target(of: path) {
        case .service?:
            interfaces = [Self.serviceInterface]
            children = ["collection", "aliases", "session"]
        case .collection(let name)?:
            interfaces = [Self.collectionInterface]
            children = ((try? entries(in: name)) ?? []).map(\.id)
        case .item?: interfaces = [Self.itemInterface]
        case .session?: interfaces = [Self.sessionInterface]
        case .prompt?: interfaces = [Self.promptInterface]
        case nil:
            interfaces = []
            if path == Self.root + "/collection" { children = collectionNames() }
            if path == Self.root + "/aliases" {
                let index = (try? current()) ?? CollectionIndex()
                children = index.collections.keys.flatMap { index.aliases(of: $0) }.sorted()
            }
        }
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" "
            + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        for interface in [Self.introspectableInterface, Self.propertiesInterface] + interfaces {
            xml += "  <interface name=\"\(interface)\"/>\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
