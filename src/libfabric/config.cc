#include "libfabric/config.h"

#include "libfabric/provider.h"

namespace braid::libfabric {

void DefineParams() {
  fi_provider* p = Provider();
  fi_param_define(p, "bind_addr", FI_PARAM_STRING,
                  "IP address braid endpoints bind (default: 127.0.0.1)");
  fi_param_define(p, "mtu", FI_PARAM_INT,
                  "IP MTU of the network, 576..65535 (default: the MTU of "
                  "the interface the endpoints bind on, at most 9000; 1500 "
                  "when not known)");
  fi_param_define(p, "paths", FI_PARAM_INT,
                  "Entropy values (paths) per peer, 1..256 (default: 16)");
  fi_param_define(p, "mode", FI_PARAM_STRING,
                  "spray or gbn (single-path go-back-N) (default: spray)");
  fi_param_define(p, "unexpected_mb", FI_PARAM_INT,
                  "Unexpected-message MiB an endpoint buffers before "
                  "back-pressuring senders (default: 256)");
  fi_param_define(p, "peer_timeout_ms", FI_PARAM_INT,
                  "A send fails when its peer answers nothing for this "
                  "long, ms (default: 2000)");
  fi_param_define(p, "progress_us", FI_PARAM_INT,
                  "A progress thread drives the endpoints after the "
                  "application has made no call for this long, us; 0 = no "
                  "thread (default: 10000)");
  fi_param_define(p, "atomics", FI_PARAM_BOOL,
                  "Offer FI_ATOMIC (default: 1; 0 keeps clients that need "
                  "RMA and atomics, e.g. Open MPI's btl/ofi, off braid)");
}

namespace {

ProviderConfig Read() {
  ProviderConfig c;
  fi_provider* p = Provider();
  char* s = nullptr;
  if (fi_param_get_str(p, "bind_addr", &s) == FI_SUCCESS && s) c.bind_ip = s;
  int v = 0;
  if (fi_param_get_int(p, "mtu", &v) == FI_SUCCESS) {
    if (v >= 576 && v <= 65535) {
      c.mtu = static_cast<uint32_t>(v);
    } else {
      FI_WARN(p, FI_LOG_CORE,
              "FI_BRAID_MTU=%d out of 576..65535, using the link's\n", v);
    }
  }
  if (fi_param_get_int(p, "paths", &v) == FI_SUCCESS) {
    if (v >= 1 && v <= 256) {
      c.paths = static_cast<uint16_t>(v);
    } else {
      FI_WARN(p, FI_LOG_CORE, "FI_BRAID_PATHS=%d out of 1..256, using %u\n", v,
              c.paths);
    }
  }
  if (fi_param_get_str(p, "mode", &s) == FI_SUCCESS && s) {
    auto m = ParseMode(s);
    if (m.ok()) {
      c.mode = *m;
    } else {
      FI_WARN(p, FI_LOG_CORE, "FI_BRAID_MODE=%s: not spray or gbn\n", s);
    }
  }
  if (fi_param_get_int(p, "unexpected_mb", &v) == FI_SUCCESS) {
    if (v >= 1) {
      c.unexpected_bytes = static_cast<uint64_t>(v) << 20;
    } else {
      FI_WARN(p, FI_LOG_CORE, "FI_BRAID_UNEXPECTED_MB=%d must be >= 1\n", v);
    }
  }
  if (fi_param_get_int(p, "peer_timeout_ms", &v) == FI_SUCCESS) {
    if (v >= 1) {
      c.peer_timeout = DurationNs::Millis(v);
    } else {
      FI_WARN(p, FI_LOG_CORE, "FI_BRAID_PEER_TIMEOUT_MS=%d must be >= 1\n", v);
    }
  }
  if (fi_param_get_int(p, "progress_us", &v) == FI_SUCCESS) {
    if (v >= 0) {
      c.progress_idle = DurationNs::Micros(v);
    } else {
      FI_WARN(p, FI_LOG_CORE, "FI_BRAID_PROGRESS_US=%d must be >= 0\n", v);
    }
  }
  int on = 0;
  if (fi_param_get_bool(p, "atomics", &on) == FI_SUCCESS) c.atomics = on != 0;
  return c;
}

}  // namespace

const ProviderConfig& Config() {
  static const ProviderConfig config = Read();
  return config;
}

}  // namespace braid::libfabric
