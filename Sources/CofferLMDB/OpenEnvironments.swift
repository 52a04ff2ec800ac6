@_spi(Backend) import Coffer
import Foundation

/// The environments open in this process, by directory, so that two backends on one store
/// share one environment: liblmdb forbids opening an environment twice in a process (its
/// file locks are per process).
enum OpenEnvironments {
  private struct Entry {
    let environment: LMDBEnvironment
    var users: Int
  }

  /// Lock-guarded registry of open environments, keyed by real path.
  private static let open = LockedState<[String: Entry]>([:])

  /// The environment of the store in `path`, opening it if no backend of this process has.
  static func acquire(
    path: String, configuration: LMDBBackend.Configuration, context: StoreContext
  ) throws -> LMDBEnvironment {
    try LMDBEnvironment.prepareDirectory(path, context)
    let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    return try open.withLock { open in
      if var entry = open[key], !entry.environment.isClosed {
        entry.users += 1
        open[key] = entry
        return entry.environment
      }
      let environment = try LMDBEnvironment(path: path, configuration: configuration, context: context)
      open[key] = Entry(environment: environment, users: 1)
      return environment
    }
  }

  /// Gives an environment back; the last user closes it.
  static func release(_ environment: LMDBEnvironment) {
    let last = open.withLock { open -> Bool in
      guard let key = open.first(where: { $0.value.environment === environment })?.key,
        var entry = open[key]
      else { return true }
      entry.users -= 1
      if entry.users > 0 {
        open[key] = entry
        return false
      }
      open[key] = nil
      return true
    }
    if last { environment.close() }
  }
}
