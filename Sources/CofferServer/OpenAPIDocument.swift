/// The OpenAPI 3.1 document of the API, served at `/openapi.json`.
enum OpenAPIDocument {
  static let json = #"{"openapi":"3.1.0","info":{"title":"Coffer","version":"1"},"paths":{}}"#
}
