import SwiftDiagnostics

/// The errors `@Storable` reports, each saying what is wrong and what to do.
enum StorableDiagnostic: DiagnosticMessage {
  case notAStruct(kind: String)
  case noID(name: String, type: String)
  case idNotStored(name: String)
  case idNeedsType(name: String)
  case idConflict(option: String)
  case unsupportedType(property: String, type: String, reason: String)
  case computedMarked(property: String, marker: String)
  case transientNeedsDefault(property: String)
  case lazyStored(property: String)
  case letWithValue(property: String)
  case ownCodingKeys
  case markersWithCodingKeys(property: String)
  case notInCodingKeys(property: String)
  case indexesTwice
  case referencesTwice
  case badArgument(String)
  case duplicateStoredName(String)

  var message: String {
    switch self {
    case .notAStruct(let kind):
      "@Storable applies to structs, not to a \(kind): stored models are values. Make it a struct."
    case .noID(let name, let type):
      "@Storable type '\(type)' has no stored property '\(name)' to use as its id. Add one "
        + "(Int64, Int, String or UUID), or name another with @Storable(id: \"…\")."
    case .idNotStored(let name):
      "The id '\(name)' must be a stored property, not computed or @Transient."
    case .idNeedsType(let name):
      "The id property '\(name)' needs a type annotation so that @Storable can declare 'id' from it."
    case .idConflict(let option):
      "The type has a property 'id' but @Storable(id: \"\(option)\") names another; Identifiable's id "
        + "must be the stored id. Drop the option or rename the property."
    case .unsupportedType(let property, let type, let reason):
      "Property '\(property)' of type '\(type)' cannot be stored: \(reason). Mark it @Transient to leave "
        + "it out of storage."
    case .computedMarked(let property, let marker):
      "'\(property)' is a computed property and is not stored, so @\(marker) has no effect; remove it, "
        + "or make '\(property)' a stored property."
    case .transientNeedsDefault(let property):
      "@Transient property '\(property)' needs an initial value: it is not stored, so reading a value "
        + "back has nothing else to give it."
    case .lazyStored(let property):
      "lazy property '\(property)' cannot be stored; mark it @Transient or make it a plain var."
    case .letWithValue(let property):
      "'\(property)' is a let with an initial value, so a stored value could never be read back into it; "
        + "make it a var, or mark it @Transient."
    case .ownCodingKeys:
      "@Storable reads CodingKeys only as an enum of plain cases with string raw values; write it so, "
        + "or remove it and rename fields with @StoredName(\"…\") or leave them out with @Transient."
    case .markersWithCodingKeys(let property):
      "'\(property)' has @StoredName or @Transient but the type declares CodingKeys; name and leave out "
        + "fields in one place: the CodingKeys enum, or the markers."
    case .notInCodingKeys(let property):
      "'\(property)' is not in CodingKeys, so it is not stored, but it has no initial value to take when a "
        + "value is read back; add it to CodingKeys or give it an initial value."
    case .indexesTwice:
      "Declare indexes either with @Indexed/@Unique or with 'static var indexes', not both."
    case .referencesTwice:
      "Declare references either with @Reference or with 'static var references', not both."
    case .badArgument(let text):
      text
    case .duplicateStoredName(let name):
      "Two properties are stored under the name '\(name)'; give one another @StoredName."
    }
  }

  var diagnosticID: MessageID {
    let id: String =
      switch self {
      case .notAStruct: "notAStruct"
      case .noID: "noID"
      case .idNotStored: "idNotStored"
      case .idNeedsType: "idNeedsType"
      case .idConflict: "idConflict"
      case .unsupportedType: "unsupportedType"
      case .computedMarked: "computedMarked"
      case .transientNeedsDefault: "transientNeedsDefault"
      case .lazyStored: "lazyStored"
      case .letWithValue: "letWithValue"
      case .ownCodingKeys: "ownCodingKeys"
      case .markersWithCodingKeys: "markersWithCodingKeys"
      case .notInCodingKeys: "notInCodingKeys"
      case .indexesTwice: "indexesTwice"
      case .referencesTwice: "referencesTwice"
      case .badArgument: "badArgument"
      case .duplicateStoredName: "duplicateStoredName"
      }
    return MessageID(domain: "CofferMacros", id: id)
  }

  var severity: DiagnosticSeverity { .error }
}

/// The fix-its `@Storable` offers.
struct StorableFixIt: FixItMessage {
  let message: String
  var fixItID: MessageID { MessageID(domain: "CofferMacros", id: message) }
}
