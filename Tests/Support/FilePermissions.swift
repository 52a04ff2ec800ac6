import Foundation

/// The permission bits of a file or directory (`0o600`), or `nil` when it does not exist.
public func permissions(of path: String) -> Int? {
  (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
}

/// Whether only the owner may read, write or enter a file or directory that exists.
public func isOwnerOnly(_ path: String) -> Bool {
  guard let bits = permissions(of: path) else { return false }
  return bits & 0o077 == 0
}
