// braid's NetAddr as the sockaddr libfabric applications exchange
// (FI_SOCKADDR_IN / FI_SOCKADDR_IN6), and back.
#ifndef BRAID_LIBFABRIC_SOCKADDR_H_
#define BRAID_LIBFABRIC_SOCKADDR_H_

#include <sys/socket.h>

#include <cstddef>

#include "braid/address.h"

namespace braid::libfabric {

// Writes `a` as a sockaddr_in or sockaddr_in6 into *out; returns its length
// (0 for an invalid address).
size_t ToSockaddr(const NetAddr& a, sockaddr_storage* out);

// Reads a sockaddr_in / sockaddr_in6 of `len` bytes at `addr` (canonical
// form: an IPv4-mapped IPv6 address becomes IPv4). Returns false for
// anything else or a short buffer.
bool FromSockaddr(const void* addr, size_t len, NetAddr* out);

// The size of the sockaddr at `addr` judged by its family (0 if neither).
size_t SockaddrLen(const void* addr);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_SOCKADDR_H_
