// The system SQLite 3 headers, for the CofferSQLite backend.
#include <sqlite3.h>
