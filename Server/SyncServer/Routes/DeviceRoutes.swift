import Hummingbird
import SyncCore
import SyncProtocol

/// Listing and revoking the devices of the caller's account. A revocation reaches the push hubs of
/// every server process through the storage's change listener.
struct DeviceRoutes {
    let storage: any ServerStorage
    let clock: ServerClock

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.get("/v1/devices") { _, context in
            let device = try context.requireDevice()
            let devices = try await storage.devices(of: device.account).map { record in
                DeviceInfo(
                    id: record.id, name: record.name, createdAt: record.createdAt, lastSeenAt: record.lastSeenAt,
                    revokedAt: record.revokedAt, current: record.id == device.id)
            }
            return JSONBody.response(DeviceListResponse(devices: devices))
        }
        group.delete("/v1/devices/:device") { _, context in
            let caller = try context.requireDevice()
            // Only devices of the caller's own account can be found, so another account's device is
            // indistinguishable from one that does not exist.
            guard let id = context.parameters.get("device").flatMap(DeviceID.init),
                try await storage.revokeDevice(id, of: caller.account, now: clock.now())
            else { throw APIError.notFound }
            for group in try await storage.groups(of: caller.account) {
                try await storage.forgetGroupZoneDevicesNoLongerMembers(of: group.group)
            }
            context.logger.info("device revoked", metadata: ["account": "\(caller.account)", "device": "\(id)"])
            return Response(status: .noContent)
        }
    }
}
