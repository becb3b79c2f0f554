// Builds the backend an endpoint's options name (EndpointOptions::backend).
// The one place that maps the public options onto a backend's own settings;
// Endpoint::Open calls it. A backend that is not compiled into this build
// is an error naming the CMake option that enables it.
#ifndef BRAID_BACKEND_BACKEND_FACTORY_H_
#define BRAID_BACKEND_BACKEND_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "backend/backend.h"
#include "braid/address.h"
#include "braid/options.h"

namespace braid::backend {

// The CMake option that builds `kind` into the library (e.g.
// "BRAID_BACKEND_DPDK"), or "" for a backend that is always built (udp).
const char* BackendBuildOption(BackendKind kind);

// Whether `kind` is compiled into this build.
bool BackendBuilt(BackendKind kind);

// Opens the backend `options.backend` names, bound to `bind` (the parsed
// options.bind). Errors: Unimplemented naming the backend and its build
// option when it is not compiled in; InvalidArgument for a value that names
// no backend; otherwise the backend's own setup errors (for udp, those
// Endpoint::Open documents).
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(
    const EndpointOptions& options, const NetAddr& bind);

}  // namespace braid::backend

#endif  // BRAID_BACKEND_BACKEND_FACTORY_H_
