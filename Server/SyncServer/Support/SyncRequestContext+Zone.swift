import Foundation
import Hummingbird
import SyncCore

/// Whose zone a request reads or writes, and as which device.
struct ZoneCaller {
    var account: AccountID
    var id: DeviceID
    /// A group's viewer: its devices read the group's zones but may not upload (decision 0290).
    var isViewer = false
}

extension SyncRequestContext {
    /// The `:zone` parameter of the route, validated (`400 invalid_field` otherwise).
    func zone() throws -> ZoneID {
        let zone = parameters.get("zone") ?? ""
        try Validation.zone(zone)
        return ZoneID(zone)
    }

    /// The caller's own account and device, or, on a route with a `:group` parameter, the group's
    /// hidden account and the caller's device row there (decision 0290): `notFound` unless the
    /// caller's account is a current member.
    func zoneCaller(storage: any ServerStorage, now: Date) async throws -> ZoneCaller {
        let device = try requireDevice()
        guard let group = parameters.get("group") else { return ZoneCaller(account: device.account, id: device.id) }
        try Validation.groupID(group)
        let access = try await storage.groupZoneAccount(of: group, for: device.id, of: device.account, now: now)
        return ZoneCaller(account: access.account, id: device.id, isViewer: access.isViewer)
    }
}
