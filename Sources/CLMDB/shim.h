// The system LMDB headers, for the CofferLMDB backend.
#include <lmdb.h>
