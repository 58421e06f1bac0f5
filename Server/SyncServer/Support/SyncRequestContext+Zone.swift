import Hummingbird

extension SyncRequestContext {
    /// The `:zone` parameter of the route, validated (`400 invalid_field` otherwise).
    func zone() throws -> String {
        let zone = parameters.get("zone") ?? ""
        try Validation.zone(zone)
        return zone
    }
}
