#include "libfabric/atomic_math.h"

#include <cstring>
#include <type_traits>

namespace braid::libfabric {
namespace {

bool IsArith(int op) {
  return op == FI_MIN || op == FI_MAX || op == FI_SUM || op == FI_PROD;
}
bool IsLogical(int op) {
  return op == FI_LOR || op == FI_LAND || op == FI_LXOR || op == FI_BOR ||
         op == FI_BAND || op == FI_BXOR;
}
bool IsCompare(int op) {
  return op == FI_CSWAP || op == FI_CSWAP_NE || op == FI_CSWAP_LE ||
         op == FI_CSWAP_LT || op == FI_CSWAP_GE || op == FI_CSWAP_GT;
}
bool IsInteger(int dt) { return dt >= FI_INT8 && dt <= FI_UINT64; }

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Sum and product in the unsigned type for integers (wrap, no UB).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote to at least unsigned int so that a small type's product
    // cannot overflow a signed int.
    using W = std::common_type_t<U, unsigned>;
    return static_cast<T>(static_cast<W>(static_cast<U>(a)) *
                          static_cast<W>(static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// The new value of one element (`old` op `v`, compared with `c`), and
// whether to store it.
template <typename T>
bool Next(int op, T old, T v, T c, T* out) {
  switch (op) {
    case FI_MIN:
      *out = v < old ? v : old;
      return true;
    case FI_MAX:
      *out = v > old ? v : old;
      return true;
    case FI_SUM:
      *out = Add(old, v);
      return true;
    case FI_PROD:
      *out = Mul(old, v);
      return true;
    case FI_ATOMIC_WRITE:
      *out = v;
      return true;
    case FI_ATOMIC_READ:
      return false;
    case FI_CSWAP:
      *out = v;
      return c == old;
    case FI_CSWAP_NE:
      *out = v;
      return c != old;
    case FI_CSWAP_LE:
      *out = v;
      return c <= old;
    case FI_CSWAP_LT:
      *out = v;
      return c < old;
    case FI_CSWAP_GE:
      *out = v;
      return c >= old;
    case FI_CSWAP_GT:
      *out = v;
      return c > old;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case FI_LOR:
        *out = static_cast<T>(old || v);
        return true;
      case FI_LAND:
        *out = static_cast<T>(old && v);
        return true;
      case FI_LXOR:
        *out = static_cast<T>((old != 0) != (v != 0));
        return true;
      case FI_BOR:
        *out = static_cast<T>(old | v);
        return true;
      case FI_BAND:
        *out = static_cast<T>(old & v);
        return true;
      case FI_BXOR:
        *out = static_cast<T>(old ^ v);
        return true;
      case FI_MSWAP:  // the bits set in compare come from the operand
        *out = static_cast<T>((v & c) | (old & ~c));
        return true;
      default:
        break;
    }
  }
  return false;
}

template <typename T>
void Apply(int op, uint8_t* target, const uint8_t* operand,
           const uint8_t* compare, size_t count, uint8_t* fetched) {
  for (size_t i = 0; i < count; ++i) {
    uint8_t* p = target + i * sizeof(T);
    const T old = Load<T>(p);
    const T v = operand ? Load<T>(operand + i * sizeof(T)) : T{};
    const T c = compare ? Load<T>(compare + i * sizeof(T)) : T{};
    if (fetched) std::memcpy(fetched + i * sizeof(T), &old, sizeof(T));
    T out{};
    if (Next(op, old, v, c, &out)) std::memcpy(p, &out, sizeof(T));
  }
}

}  // namespace

size_t AtomicTypeSize(int dt) {
  switch (dt) {
    case FI_INT8:
    case FI_UINT8:
      return 1;
    case FI_INT16:
    case FI_UINT16:
      return 2;
    case FI_INT32:
    case FI_UINT32:
    case FI_FLOAT:
      return 4;
    case FI_INT64:
    case FI_UINT64:
    case FI_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

bool AtomicOffered(AtomicKind kind, int dt, int op) {
  if (AtomicTypeSize(dt) == 0) return false;
  switch (kind) {
    case AtomicKind::kWrite:
    case AtomicKind::kFetch:
      if (op == FI_ATOMIC_READ) return kind == AtomicKind::kFetch;
      if (op == FI_ATOMIC_WRITE || IsArith(op)) return true;
      return IsLogical(op) && IsInteger(dt);
    case AtomicKind::kCompare:
      return IsCompare(op) || (op == FI_MSWAP && IsInteger(dt));
  }
  return false;
}

bool AtomicHasOperand(int op) { return op != FI_ATOMIC_READ; }
bool AtomicHasCompare(int op) { return IsCompare(op) || op == FI_MSWAP; }

void ApplyAtomic(int dt, int op, uint8_t* target, const uint8_t* operand,
                 const uint8_t* compare, size_t count, uint8_t* fetched) {
  switch (dt) {
    case FI_INT8:
      return Apply<int8_t>(op, target, operand, compare, count, fetched);
    case FI_UINT8:
      return Apply<uint8_t>(op, target, operand, compare, count, fetched);
    case FI_INT16:
      return Apply<int16_t>(op, target, operand, compare, count, fetched);
    case FI_UINT16:
      return Apply<uint16_t>(op, target, operand, compare, count, fetched);
    case FI_INT32:
      return Apply<int32_t>(op, target, operand, compare, count, fetched);
    case FI_UINT32:
      return Apply<uint32_t>(op, target, operand, compare, count, fetched);
    case FI_INT64:
      return Apply<int64_t>(op, target, operand, compare, count, fetched);
    case FI_UINT64:
      return Apply<uint64_t>(op, target, operand, compare, count, fetched);
    case FI_FLOAT:
      return Apply<float>(op, target, operand, compare, count, fetched);
    case FI_DOUBLE:
      return Apply<double>(op, target, operand, compare, count, fetched);
    default:
      return;
  }
}

}  // namespace braid::libfabric
