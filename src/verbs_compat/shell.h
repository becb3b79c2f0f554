// Each braid verbs object is a C++ object that owns a "shell": the public
// libibverbs struct the application sees, followed by a pointer back to
// its owner. Applications hold pointers to the public struct; Owner()
// recovers the C++ object. The public struct is the shell's first member,
// so the two pointers are interconvertible.
#ifndef BRAID_VERBS_COMPAT_SHELL_H_
#define BRAID_VERBS_COMPAT_SHELL_H_

#include <infiniband/verbs.h>

namespace braid::verbs_compat {

template <typename Ibv, typename Owner>
struct Shell {
  Ibv ibv;
  Owner* owner;

  // The owner of a public struct that is known to live in a Shell.
  static Owner* OwnerOf(const Ibv* p) {
    return reinterpret_cast<const Shell*>(p)->owner;
  }
};

// True if `device` is braid0 (defined in device.cc).
bool IsBraidDevice(const ibv_device* device);

inline bool IsBraidContext(const ibv_context* ctx) {
  return ctx != nullptr && IsBraidDevice(ctx->device);
}

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_SHELL_H_
