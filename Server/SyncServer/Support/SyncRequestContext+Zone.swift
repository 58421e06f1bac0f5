import Hummingbird
import SyncCore

extension SyncRequestContext {
    /// The `:zone` parameter of the route, validated (`400 invalid_field` otherwise).
    func zone() throws -> ZoneID {
        let zone = parameters.get("zone") ?? ""
        try Validation.zone(zone)
        return ZoneID(zone)
    }
}
