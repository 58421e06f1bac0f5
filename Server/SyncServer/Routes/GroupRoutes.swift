import Hummingbird
import SyncCore
import SyncProtocol

/// Shared password groups' membership logs (decision 0283). The server stores each group's signed
/// entries in order and serves them to the devices of the accounts the latest entry's appender
/// named; devices verify every entry from the owner's create against the cards they pinned, so what
/// the server decides here is only whom it serves, never who is a member.
struct GroupRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.get("/v1/groups") { _, context in try await groups(context) }
        group.get("/v1/groups/:group/log") { request, context in try await log(request, context) }
        group.put("/v1/groups/:group/log") { request, context in try await append(request, context) }
    }

    private func groups(_ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let groups = try await storage.groups(of: device.account).map { GroupSummaryMessage(group: $0.group, entries: $0.entries) }
        return JSONBody.response(GroupListResponse(groups: groups))
    }

    private func log(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let group = try groupID(context)
        return try await LogPage.response(request, page: GroupRules.maximumPage) { from, limit in
            try await storage.groupLog(of: group, readBy: device.account, from: from, limit: limit)
        }
    }

    private func append(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let group = try groupID(context)
        let body = try await JSONBody.decode(GroupLogAppendRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.groupLogAppend(body)
        var members: Set<AccountID> = [], viewers: Set<AccountID> = []
        let viewerNames = Set(body.viewers ?? [])
        for name in body.members {
            guard let account = try await storage.account(named: name) else {
                throw APIError.invalid("a group's members are accounts of this server")
            }
            members.insert(account.id)
            if viewerNames.contains(name) { viewers.insert(account.id) }
        }
        if body.index == 0, members != [device.account] {
            throw APIError.invalid("a new group's only member is the account that creates it")
        }
        try await storage.appendGroupLogEntry(body.entry.bytes, at: body.index, of: group, by: device.account, members: members, viewers: viewers, now: clock.now())
        // An account the entry left out no longer reads or writes the group's zones, nor holds their
        // tombstones back.
        try await storage.forgetGroupZoneDevicesNoLongerMembers(of: group)
        context.logger.info("group log appended", metadata: ["account": "\(device.account)", "index": "\(body.index)"])
        return Response(status: .noContent)
    }

    private func groupID(_ context: SyncRequestContext) throws -> String {
        let group = context.parameters.get("group") ?? ""
        try Validation.groupID(group)
        return group
    }
}
