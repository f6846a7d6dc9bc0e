import Foundation

/// Raises this process's limit of open files to `wanted`: thousands of push connections (and the
/// load generators that open them) need more descriptors than the usual soft limit of 1,024.
/// Up to the hard limit anyone may; beyond it only a privileged process, so an unprivileged one
/// settles for the hard limit. Children inherit the limit.
public func raiseOpenFileLimit(to wanted: rlim_t = 1 << 20) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted else { return }
    var raised = rlimit(rlim_cur: wanted, rlim_max: max(wanted, limit.rlim_max))
    if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) != 0 {
        raised = rlimit(rlim_cur: min(wanted, limit.rlim_max), rlim_max: limit.rlim_max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised)
    }
}
