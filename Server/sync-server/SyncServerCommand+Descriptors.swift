#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SyncServerCommand {
    /// Descriptors kept beside the client connections: the database, its pool, log and certificate
    /// files.
    static let reservedDescriptors = 256

    /// Raises the process's soft limit on open files to its hard limit, as the connection cap
    /// needs one descriptor per connection; says what is wrong when even the hard limit is below
    /// `--max-connections` and the reserve, in which case accepting fails before the cap is
    /// reached (raise `LimitNOFILE`).
    static func raiseDescriptorLimit(for connections: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(resourceLimitNoFile, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resourceLimitNoFile, &raised) == 0 { limit = raised }
        }
        let needed = rlim_t(connections + reservedDescriptors)
        guard limit.rlim_cur < needed else { return nil }
        return "the open-file limit (\(limit.rlim_cur)) is below --max-connections + \(reservedDescriptors); raise LimitNOFILE"
    }

    #if canImport(Glibc)
    private static let resourceLimitNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceLimitNoFile = RLIMIT_NOFILE
    #endif
}
