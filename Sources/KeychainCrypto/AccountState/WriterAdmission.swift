import SyncCore

/// What says who may write a version a device opens (decision 0275): the verified device log for
/// an account's zones, the verified group log for a shared group's (decision 0291).
public protocol WriterAdmission: Sendable {
    /// Whether `envelope`, opened from `blob` sealed for `context`, may be taken; nil when it may.
    func refusal(of envelope: ItemEnvelope, context: ItemBlobContext, blob: [UInt8]) -> DeviceLog.WriterRefusal?

    /// Whether `writer` (a device, or in a group an account identity) may still write: what it
    /// sealed and pulls back byte for byte is then its own version, unopened.
    func stillAdmits(_ writer: DeviceID) -> Bool
}

extension DeviceLog: WriterAdmission {
    /// Unless another device revoked it.
    public func stillAdmits(_ writer: DeviceID) -> Bool { members[writer]?.isRevokedByAnother != true }
}
