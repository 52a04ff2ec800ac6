#include <libpq-fe.h>
// For the get spike (PostgresGetSpike.swift): one thread waiting on many sockets.
#include <sys/epoll.h>
