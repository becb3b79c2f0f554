// The arithmetic of libfabric atomics, on raw bytes: which (datatype, op)
// pairs the provider offers for each kind of call, and how one is applied
// to the target's memory. Integers (8..64 bits, signed and unsigned),
// float and double; no complex, long double or 128-bit types. Pure
// functions: no I/O, no locking (the caller serialises atomics on a
// domain).
#ifndef BRAID_LIBFABRIC_ATOMIC_MATH_H_
#define BRAID_LIBFABRIC_ATOMIC_MATH_H_

#include <rdma/fi_atomic.h>

#include <cstddef>
#include <cstdint>

namespace braid::libfabric {

// The three libfabric call families.
enum class AtomicKind : uint8_t {
  kWrite = 1,    // fi_atomic*: the target is updated, nothing returned
  kFetch = 2,    // fi_fetch_atomic*: the old values are returned
  kCompare = 3,  // fi_compare_atomic*: operand and compare; old returned
};

// Largest operand of one atomic operation (count x datatype size).
inline constexpr size_t kMaxAtomicBytes = 4096;

// Bytes of one element of `dt`; 0 for a datatype not offered.
size_t AtomicTypeSize(int dt);

// True if `kind` offers `op` on `dt`: kWrite the arithmetic and logical
// ops and FI_ATOMIC_WRITE; kFetch those and FI_ATOMIC_READ; kCompare
// FI_CSWAP* and FI_MSWAP. Logical and bitwise ops and FI_MSWAP take
// integers only.
bool AtomicOffered(AtomicKind kind, int dt, int op);

// True if `op` reads the target's old value to the initiator and needs a
// buffer of operands (every op but FI_ATOMIC_READ), a compare buffer.
bool AtomicHasOperand(int op);
bool AtomicHasCompare(int op);

// Applies `op` to `count` elements of `dt` at `target` (unaligned is
// fine): operand[i] and compare[i] (either may be null when the op takes
// none). Writes the old values to `fetched` when it is not null. The
// (dt, op) pair must be offered by some kind.
void ApplyAtomic(int dt, int op, uint8_t* target, const uint8_t* operand,
                 const uint8_t* compare, size_t count, uint8_t* fetched);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_ATOMIC_MATH_H_
