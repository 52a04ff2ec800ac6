import Coffer
import CofferStores

/// The digest of the store a URL names, opened and closed again: what a command-line test
/// compares before and after running a command on the store.
func digest(of url: String) async throws -> StoreDigest {
  let store = try await Store.open(url: url)
  let digest = try await store.digest()
  try await store.close()
  return digest
}
