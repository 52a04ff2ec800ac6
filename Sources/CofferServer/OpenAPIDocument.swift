/// The OpenAPI 3.1 document of the API, served at `/openapi.json`.
///
/// Written by hand beside the routes, and kept true by tests: every route the server answers is
/// in it, every answer's status is listed for its route, and every JSON answer validates
/// against its schema (see the Server article for why the server is not generated from it).
enum OpenAPIDocument {
  static let json = ##"""
    {
     "openapi": "3.1.0",
     "info": {
      "title": "Coffer server",
      "version": "1",
      "description": "Any Coffer store over HTTP: the backend interface as JSON. `coffer serve STORE` serves one store at /v1; an embedding server may serve stores by name at /NAME/v1. Every route but health and this document needs Authorization: Bearer TOKEN."
     },
     "servers": [
      {
       "url": "/"
      }
     ],
     "security": [
      {
       "bearer": []
      }
     ],
     "components": {
      "securitySchemes": {
       "bearer": {
        "type": "http",
        "scheme": "bearer"
       }
      },
      "schemas": {
       "Value": {
        "description": "One stored value: an object with exactly one key naming its kind. Doubles are JSON numbers (bit-exact, -0 included) or the strings inf and -inf; NaN is never accepted. bytes and document are base64; date is microseconds since 1970 (Int64).",
        "oneOf": [
         {
          "type": "object",
          "properties": {
           "null": {
            "const": true
           }
          },
          "required": [
           "null"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "bool": {
            "type": "boolean"
           }
          },
          "required": [
           "bool"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "int": {
            "type": "integer",
            "minimum": -9223372036854775808,
            "maximum": 9223372036854775807
           }
          },
          "required": [
           "int"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "double": {
            "oneOf": [
             {
              "type": "number"
             },
             {
              "enum": [
               "inf",
               "-inf"
              ]
             }
            ]
           }
          },
          "required": [
           "double"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "string": {
            "type": "string"
           }
          },
          "required": [
           "string"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "bytes": {
            "type": "string",
            "contentEncoding": "base64"
           }
          },
          "required": [
           "bytes"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "date": {
            "type": "integer",
            "minimum": -9223372036854775808,
            "maximum": 9223372036854775807
           }
          },
          "required": [
           "date"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "uuid": {
            "type": "string",
            "format": "uuid"
           }
          },
          "required": [
           "uuid"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "document": {
            "type": "string",
            "contentEncoding": "base64"
           }
          },
          "required": [
           "document"
          ],
          "additionalProperties": false
         }
        ]
       },
       "Row": {
        "type": "array",
        "items": {
         "$ref": "#/components/schemas/Value"
        },
        "description": "A row's values in the layout's field order."
       },
       "Field": {
        "type": "object",
        "properties": {
         "name": {
          "type": "string"
         },
         "kind": {
          "enum": [
           "bool",
           "int",
           "double",
           "string",
           "bytes",
           "date",
           "uuid",
           "document"
          ]
         },
         "isOptional": {
          "type": "boolean"
         },
         "defaultValue": {
          "$ref": "#/components/schemas/Value"
         }
        },
        "required": [
         "name",
         "kind",
         "isOptional"
        ]
       },
       "Index": {
        "type": "object",
        "properties": {
         "fields": {
          "type": "array",
          "items": {
           "type": "string"
          }
         },
         "isUnique": {
          "type": "boolean"
         },
         "kind": {
          "type": "string",
          "enum": [
           "text"
          ]
         }
        },
        "required": [
         "fields",
         "isUnique"
        ]
       },
       "Reference": {
        "type": "object",
        "properties": {
         "field": {
          "type": "string"
         },
         "entity": {
          "type": "string"
         },
         "onDelete": {
          "enum": [
           "cascade",
           "nullify",
           "deny",
           "none"
          ]
         }
        },
        "required": [
         "field",
         "entity",
         "onDelete"
        ]
       },
       "EntitySchema": {
        "type": "object",
        "properties": {
         "name": {
          "type": "string"
         },
         "fields": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Field"
          }
         },
         "idField": {
          "type": "string"
         },
         "indexes": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Index"
          }
         },
         "references": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Reference"
          }
         }
        },
        "required": [
         "name",
         "fields",
         "idField",
         "indexes"
        ]
       },
       "Filter": {
        "description": "Which rows: one key per object. Nesting deeper than the server's maxFilterDepth is refused.",
        "oneOf": [
         {
          "type": "object",
          "properties": {
           "all": {
            "const": true
           }
          },
          "required": [
           "all"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "compare": {
            "type": "object",
            "properties": {
             "field": {
              "type": "string"
             },
             "op": {
              "enum": [
               "==",
               "!=",
               "<",
               "<=",
               ">",
               ">="
              ]
             },
             "value": {
              "$ref": "#/components/schemas/Value"
             }
            },
            "required": [
             "field",
             "op",
             "value"
            ]
           }
          },
          "required": [
           "compare"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "in": {
            "type": "object",
            "properties": {
             "field": {
              "type": "string"
             },
             "values": {
              "type": "array",
              "items": {
               "$ref": "#/components/schemas/Value"
              }
             }
            },
            "required": [
             "field",
             "values"
            ]
           }
          },
          "required": [
           "in"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "string": {
            "type": "object",
            "properties": {
             "field": {
              "type": "string"
             },
             "match": {
              "enum": [
               "contains",
               "hasPrefix",
               "hasSuffix",
               "containsIgnoringCase",
               "hasPrefixIgnoringCase",
               "hasSuffixIgnoringCase",
               "equalIgnoringCase"
              ]
             },
             "pattern": {
              "type": "string"
             }
            },
            "required": [
             "field",
             "match",
             "pattern"
            ]
           }
          },
          "required": [
           "string"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "compareFields": {
            "type": "object",
            "properties": {
             "field": {
              "type": "string"
             },
             "op": {
              "enum": [
               "==",
               "!=",
               "<",
               "<=",
               ">",
               ">="
              ]
             },
             "other": {
              "type": "string"
             }
            },
            "required": [
             "field",
             "op",
             "other"
            ]
           }
          },
          "required": [
           "compareFields"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "and": {
            "type": "array",
            "items": {
             "$ref": "#/components/schemas/Filter"
            }
           }
          },
          "required": [
           "and"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "or": {
            "type": "array",
            "items": {
             "$ref": "#/components/schemas/Filter"
            }
           }
          },
          "required": [
           "or"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "not": {
            "$ref": "#/components/schemas/Filter"
           }
          },
          "required": [
           "not"
          ],
          "additionalProperties": false
         }
        ]
       },
       "Sort": {
        "type": "object",
        "properties": {
         "field": {
          "type": "string"
         },
         "ascending": {
          "type": "boolean",
          "default": true
         }
        },
        "required": [
         "field"
        ]
       },
       "Cursor": {
        "type": "object",
        "properties": {
         "values": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Value"
          }
         }
        },
        "required": [
         "values"
        ],
        "description": "Keyset: the sort fields' values, then the id, of the last row seen."
       },
       "Query": {
        "type": "object",
        "properties": {
         "entity": {
          "type": "string"
         },
         "filter": {
          "$ref": "#/components/schemas/Filter"
         },
         "sort": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Sort"
          }
         },
         "limit": {
          "type": "integer",
          "minimum": 0
         },
         "offset": {
          "type": "integer",
          "minimum": 0
         },
         "layout": {
          "$ref": "#/components/schemas/EntitySchema"
         },
         "layoutDigest": {
          "type": "string",
          "description": "The layout named by the digest of the entity's stored schema, in place of layout; refused with 409 when it is not that schema's."
         },
         "after": {
          "$ref": "#/components/schemas/Cursor"
         },
         "select": {
          "type": "array",
          "items": {
           "type": "string"
          }
         }
        },
        "required": [
         "entity"
        ]
       },
       "Rows": {
        "type": "object",
        "properties": {
         "rows": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Row"
          }
         },
         "next": {
          "$ref": "#/components/schemas/Cursor"
         }
        },
        "required": [
         "rows"
        ]
       },
       "Count": {
        "type": "object",
        "properties": {
         "count": {
          "type": "integer"
         }
        },
        "required": [
         "count"
        ]
       },
       "Get": {
        "type": "object",
        "properties": {
         "entity": {
          "type": "string"
         },
         "ids": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Value"
          }
         },
         "layout": {
          "$ref": "#/components/schemas/EntitySchema"
         }
        },
        "required": [
         "entity",
         "ids"
        ]
       },
       "Function": {
        "oneOf": [
         {
          "type": "object",
          "properties": {
           "count": {
            "const": true
           }
          },
          "required": [
           "count"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "countDistinct": {
            "type": "string"
           }
          },
          "required": [
           "countDistinct"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "sum": {
            "type": "string"
           }
          },
          "required": [
           "sum"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "min": {
            "type": "string"
           }
          },
          "required": [
           "min"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "max": {
            "type": "string"
           }
          },
          "required": [
           "max"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "average": {
            "type": "string"
           }
          },
          "required": [
           "average"
          ],
          "additionalProperties": false
         }
        ]
       },
       "Aggregation": {
        "type": "object",
        "properties": {
         "query": {
          "$ref": "#/components/schemas/Query"
         },
         "function": {
          "$ref": "#/components/schemas/Function"
         },
         "groupBy": {
          "type": "string"
         }
        },
        "required": [
         "query",
         "function"
        ]
       },
       "Groups": {
        "type": "object",
        "properties": {
         "groups": {
          "type": "array",
          "items": {
           "type": "object",
           "properties": {
            "key": {
             "$ref": "#/components/schemas/Value"
            },
            "value": {
             "$ref": "#/components/schemas/Value"
            }
           },
           "required": [
            "key",
            "value"
           ]
          }
         }
        },
        "required": [
         "groups"
        ]
       },
       "Operation": {
        "oneOf": [
         {
          "type": "object",
          "properties": {
           "insert": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "row": {
              "$ref": "#/components/schemas/Row"
             }
            },
            "required": [
             "entity",
             "row"
            ]
           }
          },
          "required": [
           "insert"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "update": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "row": {
              "$ref": "#/components/schemas/Row"
             }
            },
            "required": [
             "entity",
             "row"
            ]
           }
          },
          "required": [
           "update"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "upsert": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "row": {
              "$ref": "#/components/schemas/Row"
             }
            },
            "required": [
             "entity",
             "row"
            ]
           }
          },
          "required": [
           "upsert"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "insertMany": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "rows": {
              "type": "array",
              "items": {
               "$ref": "#/components/schemas/Row"
              }
             }
            },
            "required": [
             "entity",
             "rows"
            ]
           }
          },
          "required": [
           "insertMany"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "delete": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "id": {
              "$ref": "#/components/schemas/Value"
             }
            },
            "required": [
             "entity",
             "id"
            ]
           }
          },
          "required": [
           "delete"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "deleteMatching": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "filter": {
              "$ref": "#/components/schemas/Filter"
             }
            },
            "required": [
             "entity",
             "filter"
            ]
           }
          },
          "required": [
           "deleteMatching"
          ],
          "additionalProperties": false
         },
         {
          "type": "object",
          "properties": {
           "updateMatching": {
            "type": "object",
            "properties": {
             "entity": {
              "type": "string"
             },
             "filter": {
              "$ref": "#/components/schemas/Filter"
             },
             "changes": {
              "type": "array",
              "items": {
               "type": "object",
               "properties": {
                "field": {
                 "type": "string"
                },
                "set": {
                 "$ref": "#/components/schemas/Value"
                },
                "add": {
                 "$ref": "#/components/schemas/Value"
                }
               },
               "required": [
                "field"
               ],
               "description": "Exactly one of set and add."
              }
             }
            },
            "required": [
             "entity",
             "filter",
             "changes"
            ]
           }
          },
          "required": [
           "updateMatching"
          ],
          "additionalProperties": false
         }
        ]
       },
       "Precondition": {
        "type": "object",
        "properties": {
         "query": {
          "$ref": "#/components/schemas/Query"
         },
         "rows": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Row"
          }
         },
         "count": {
          "type": "integer",
          "minimum": 0
         }
        },
        "required": [
         "query"
        ],
        "description": "Exactly one of rows and count."
       },
       "Batch": {
        "type": "object",
        "properties": {
         "operations": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Operation"
          }
         },
         "layouts": {
          "type": [
           "object",
           "null"
          ],
          "additionalProperties": {
           "$ref": "#/components/schemas/EntitySchema"
          },
          "description": "null is the same as absent."
         },
         "layoutDigests": {
          "type": [
           "object",
           "null"
          ],
          "additionalProperties": {
           "type": "string"
          },
          "description": "Layouts named by the digest of each entity's stored schema, in place of layouts; a digest that is not that schema's refuses the batch with 409 and applies nothing. null is the same as absent."
         },
         "preconditions": {
          "type": [
           "array",
           "null"
          ],
          "description": "null is the same as absent.",
          "items": {
           "$ref": "#/components/schemas/Precondition"
          }
         },
         "references": {
          "enum": [
           "enforce",
           "expanded",
           null
          ]
         }
        },
        "required": [
         "operations"
        ]
       },
       "Summary": {
        "type": "object",
        "properties": {
         "inserted": {
          "type": "integer"
         },
         "updated": {
          "type": "integer"
         },
         "deleted": {
          "type": "integer"
         },
         "replayed": {
          "type": "boolean"
         }
        },
        "required": [
         "inserted",
         "updated",
         "deleted",
         "replayed"
        ]
       },
       "Error": {
        "type": "object",
        "properties": {
         "error": {
          "type": "object",
          "properties": {
           "code": {
            "type": "string"
           },
           "message": {
            "type": "string"
           },
           "store": {
            "type": "string"
           },
           "entity": {
            "type": "string"
           },
           "id": {
            "type": "string"
           },
           "idValue": {
            "$ref": "#/components/schemas/Value"
           },
           "field": {
            "type": "string"
           }
          },
          "required": [
           "code",
           "message"
          ]
         }
        },
        "required": [
         "error"
        ]
       },
       "Prepare": {
        "type": "object",
        "properties": {
         "schemas": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/EntitySchema"
          }
         }
        },
        "required": [
         "schemas"
        ]
       },
       "Schemas": {
        "type": "object",
        "properties": {
         "schemas": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/EntitySchema"
          }
         }
        },
        "required": [
         "schemas"
        ]
       },
       "StoreInfo": {
        "type": "object",
        "properties": {
         "name": {
          "type": "string"
         },
         "capabilities": {
          "type": "array",
          "items": {
           "type": "string"
          }
         },
         "abilities": {
          "type": "array",
          "items": {
           "type": "string"
          }
         },
         "limits": {
          "type": "object",
          "properties": {
           "maxRows": {
            "type": "integer"
           },
           "maxBodyBytes": {
            "type": "integer"
           },
           "maxFilterDepth": {
            "type": "integer"
           }
          },
          "required": [
           "maxRows",
           "maxBodyBytes",
           "maxFilterDepth"
          ]
         }
        },
        "required": [
         "name",
         "capabilities",
         "abilities",
         "limits"
        ]
       },
       "Health": {
        "type": "object",
        "properties": {
         "status": {
          "const": "ok"
         }
        },
        "required": [
         "status"
        ]
       },
       "CommitMarker": {
        "type": "object",
        "properties": {
         "marker": {
          "type": [
           "integer",
           "null"
          ]
         }
        },
        "required": [
         "marker"
        ]
       },
       "Bounds": {
        "type": "object",
        "properties": {
         "bounds": {
          "type": [
           "object",
           "null"
          ],
          "properties": {
           "trimmedThrough": {
            "type": "integer"
           },
           "last": {
            "type": "integer"
           }
          },
          "required": [
           "trimmedThrough",
           "last"
          ]
         }
        }
       },
       "RowChange": {
        "type": "object",
        "properties": {
         "entity": {
          "type": "string"
         },
         "id": {
          "$ref": "#/components/schemas/Value"
         },
         "kind": {
          "enum": [
           "insert",
           "update",
           "delete"
          ]
         },
         "fields": {
          "type": "array",
          "items": {
           "type": "string"
          }
         },
         "values": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/Value"
          }
         }
        },
        "required": [
         "entity",
         "id",
         "kind",
         "fields",
         "values"
        ]
       },
       "ChangeBatches": {
        "type": "object",
        "properties": {
         "batches": {
          "type": "array",
          "items": {
           "type": "object",
           "properties": {
            "sequence": {
             "type": "integer"
            },
            "committedAt": {
             "type": "integer"
            },
            "payload": {
             "type": "string",
             "contentEncoding": "base64"
            },
            "changes": {
             "type": "array",
             "items": {
              "$ref": "#/components/schemas/RowChange"
             }
            }
           },
           "required": [
            "sequence",
            "committedAt",
            "payload",
            "changes"
           ]
          }
         }
        },
        "required": [
         "batches"
        ]
       },
       "StreamBatch": {
        "type": "object",
        "properties": {
         "sequence": {
          "type": "integer"
         },
         "position": {
          "type": "string"
         },
         "committedAt": {
          "type": "integer"
         },
         "changes": {
          "type": "array",
          "items": {
           "$ref": "#/components/schemas/RowChange"
          }
         }
        },
        "required": [
         "sequence",
         "position",
         "committedAt",
         "changes"
        ]
       },
       "Ready": {
        "type": "object",
        "properties": {
         "ready": {
          "type": "boolean"
         }
        },
        "required": [
         "ready"
        ]
       },
       "Retention": {
        "type": "object",
        "properties": {
         "retention": {
          "type": "string",
          "pattern": "^(all|[1-9][0-9]{0,8}|[1-9][0-9]{0,5}[smhd])$",
          "description": "all, a count of batches, or an age: 7d, 12h, 30m, 90s."
         }
        },
        "required": [
         "retention"
        ]
       },
       "Trim": {
        "oneOf": [
         {
          "type": "object",
          "properties": {
           "through": {
            "type": "integer",
            "minimum": 0,
            "maximum": 9223372036854775807
           }
          },
          "required": [
           "through"
          ]
         },
         {
          "type": "object",
          "properties": {
           "committedBefore": {
            "type": "integer",
            "minimum": -9223372036854775808,
            "maximum": 9223372036854775807
           }
          },
          "required": [
           "committedBefore"
          ]
         }
        ]
       },
       "Done": {
        "type": "object"
       }
      }
     },
     "paths": {
      "/v1/health": {
       "get": {
        "operationId": "health",
        "summary": "Whether the server answers (no token needed).",
        "security": [],
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Health"
            }
           }
          }
         }
        }
       }
      },
      "/v1/store": {
       "get": {
        "operationId": "storeInfo",
        "summary": "The store's name, capabilities, abilities and the server's limits.",
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/StoreInfo"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/prepare": {
       "post": {
        "operationId": "prepare",
        "summary": "Prepare entities (write scope) and list every stored schema ([] only lists; read scope).",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Prepare"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Schemas"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/read": {
       "post": {
        "operationId": "read",
        "summary": "The rows a query selects, in the layout's field order.",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Query"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Rows"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "The layout digest is not the entity's stored schema: send the layout itself.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/count": {
       "post": {
        "operationId": "count",
        "summary": "How many rows a query's filter selects (sort, offset and limit are ignored).",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Query"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Count"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/get": {
       "post": {
        "operationId": "get",
        "summary": "Rows by id, in the order of the ids, missing ones skipped.",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Get"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Rows"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/aggregate": {
       "post": {
        "operationId": "aggregate",
        "summary": "An aggregate over the rows a filter selects, per group.",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Aggregation"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Groups"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/apply": {
       "post": {
        "operationId": "apply",
        "summary": "Apply a batch all or nothing (write scope).",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Batch"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Summary"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "422": {
          "description": "The idempotency key was used for another request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        },
        "parameters": [
         {
          "name": "Idempotency-Key",
          "in": "header",
          "schema": {
           "type": "string",
           "minLength": 1,
           "maxLength": 200
          },
          "description": "A retried key applies once; the answer repeats the first with replayed true."
         }
        ]
       }
      },
      "/v1/commit-marker": {
       "get": {
        "operationId": "commitMarker",
        "summary": "The backend's marker of the last commit, or null.",
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/CommitMarker"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/changes/bounds": {
       "get": {
        "operationId": "changeBounds",
        "summary": "The change feed's bounds, or null when the store records no feed.",
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Bounds"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/changes": {
       "get": {
        "operationId": "changes",
        "summary": "Batches of the change feed after a position.",
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/ChangeBatches"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "410": {
          "description": "The change feed was trimmed past the position.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        },
        "parameters": [
         {
          "name": "after",
          "in": "query",
          "schema": {
           "type": "string",
           "pattern": "^(c1\\.)?[0-9]{1,19}$"
          },
          "description": "A sequence (N or c1.N); batches after it."
         },
         {
          "name": "limit",
          "in": "query",
          "schema": {
           "type": "integer",
           "minimum": 1,
           "maximum": 10000
          }
         }
        ]
       }
      },
      "/v1/changes/wait": {
       "get": {
        "operationId": "waitForChanges",
        "summary": "Wait until the feed holds a batch after a position, or the timeout passes.",
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Ready"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        },
        "parameters": [
         {
          "name": "after",
          "in": "query",
          "schema": {
           "type": "string",
           "pattern": "^(c1\\.)?[0-9]{1,19}$"
          },
          "description": "A sequence (N or c1.N); batches after it."
         },
         {
          "name": "timeoutMs",
          "in": "query",
          "schema": {
           "type": "integer",
           "minimum": 0,
           "maximum": 10000,
           "default": 5000
          }
         }
        ]
       }
      },
      "/v1/changes/stream": {
       "get": {
        "operationId": "changeStream",
        "summary": "The change feed as server-sent events: id is the sequence, data a batch as JSON; resume with after or Last-Event-ID.",
        "responses": {
         "200": {
          "description": "text/event-stream of batch events: id the sequence, event batch, data a StreamBatch",
          "content": {
           "text/event-stream": {
            "schema": {
             "type": "object",
             "description": "Each event's data is a StreamBatch."
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "410": {
          "description": "The change feed was trimmed past the position.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        },
        "parameters": [
         {
          "name": "after",
          "in": "query",
          "schema": {
           "type": "string",
           "pattern": "^(c1\\.)?[0-9]{1,19}$"
          },
          "description": "A sequence (N or c1.N); batches after it."
         },
         {
          "name": "follow",
          "in": "query",
          "schema": {
           "enum": [
            "true",
            "false"
           ]
          },
          "description": "false: end once caught up."
         },
         {
          "name": "Last-Event-ID",
          "in": "header",
          "schema": {
           "type": "string",
           "pattern": "^(c1\\.)?[0-9]{1,19}$"
          }
         }
        ]
       }
      },
      "/v1/admin/changes/record": {
       "post": {
        "operationId": "recordChanges",
        "summary": "Start recording the change feed (admin scope).",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Retention"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Done"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      },
      "/v1/admin/changes/trim": {
       "post": {
        "operationId": "trimChanges",
        "summary": "Trim the change feed (admin scope).",
        "requestBody": {
         "required": true,
         "content": {
          "application/json": {
           "schema": {
            "$ref": "#/components/schemas/Trim"
           }
          }
         }
        },
        "responses": {
         "200": {
          "description": "OK",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Done"
            }
           }
          }
         },
         "400": {
          "description": "The request is malformed or does not fit the entity's schema.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "401": {
          "description": "No accepted bearer token.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "403": {
          "description": "The token lacks the scope or the entity.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "404": {
          "description": "Unknown entity or store.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "408": {
          "description": "The body did not arrive in time.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "409": {
          "description": "A duplicate id, unique value, reference, failed precondition or a state that refuses the request.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "413": {
          "description": "The body is larger than the server's limit.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "500": {
          "description": "The store failed.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "503": {
          "description": "The store is closed, locked or unavailable.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         },
         "504": {
          "description": "The store timed out.",
          "content": {
           "application/json": {
            "schema": {
             "$ref": "#/components/schemas/Error"
            }
           }
          }
         }
        }
       }
      }
     }
    }
    """##
}
