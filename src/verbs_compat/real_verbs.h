// The real libibverbs entry points, found behind this library with
// dlvsym(RTLD_NEXT) at the exact symbol versions applications bind to.
#ifndef BRAID_VERBS_COMPAT_REAL_VERBS_H_
#define BRAID_VERBS_COMPAT_REAL_VERBS_H_

#include <dlfcn.h>

namespace braid::verbs_compat {

// The next definition of `name` at `version` (or any version), or nullptr.
inline void* FindReal(const char* name, const char* version) {
  void* p = dlvsym(RTLD_NEXT, name, version);
  if (p == nullptr) p = dlsym(RTLD_NEXT, name);
  return p;
}

}  // namespace braid::verbs_compat

// Declares `real` as the real libibverbs function `fn` (same signature as
// this library's definition), resolved on first use.
#define BRAID_REAL(fn, version)                             \
  static const auto real = reinterpret_cast<decltype(&fn)>( \
      ::braid::verbs_compat::FindReal(#fn, version))

#endif  // BRAID_VERBS_COMPAT_REAL_VERBS_H_
