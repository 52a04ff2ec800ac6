@_exported import Coffer
