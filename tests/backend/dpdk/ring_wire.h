// Test fixture: two DPDK ports in this process joined back to back by a pair
// of rte_rings (a wire with no NIC, socket or second process), and the EAL
// arguments every DPDK test in a process shares.
#ifndef BRAID_TESTS_BACKEND_DPDK_RING_WIRE_H_
#define BRAID_TESTS_BACKEND_DPDK_RING_WIRE_H_

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "backend/dpdk/eal.h"
#include "gtest/gtest.h"

namespace braid::testing {

// The EAL prefix of this test process; its run directory is removed at exit.
inline std::string TestEalPrefix() {
  return absl::StrCat("braid_test_", getpid());
}

// No hugepages, no PCI, no shared config: nothing a test could leave behind
// but the run directory, which the caller removes (RemoveEalRunDir).
inline std::string TestEalArgs() {
  return absl::StrCat(
      "--no-huge -m 1024 --no-pci --no-shconf --no-telemetry "
      "--log-level=*:error --file-prefix=",
      TestEalPrefix());
}

inline void RemoveEalRunDir() {
  std::error_code ec;
  std::filesystem::remove_all(
      std::filesystem::path("/var/run/dpdk") / TestEalPrefix(), ec);
}

// Initialises the EAL for this test process (once) and removes its run
// directory when the process exits.
inline void InitTestEal() {
  static const bool once = [] {
    EXPECT_TRUE(backend::dpdk::EnsureEal(TestEalArgs()).ok());
    std::atexit(RemoveEalRunDir);
    return true;
  }();
  (void)once;
}

struct RingWire {
  std::string a;  // port names, for DpdkBackendOptions::port
  std::string b;
};

// Creates ports "net_ring_<tag>_a" and "net_ring_<tag>_b" (the ring PMD
// prefixes the names): what one sends the other receives.
inline RingWire MakeRingWire(const std::string& tag) {
  InitTestEal();
  const std::string ab = tag + "_ab", ba = tag + "_ba";
  rte_ring* r_ab = rte_ring_create(ab.c_str(), 4096, SOCKET_ID_ANY,
                                   RING_F_SP_ENQ | RING_F_SC_DEQ);
  rte_ring* r_ba = rte_ring_create(ba.c_str(), 4096, SOCKET_ID_ANY,
                                   RING_F_SP_ENQ | RING_F_SC_DEQ);
  EXPECT_TRUE(r_ab != nullptr && r_ba != nullptr) << "rte_ring_create " << tag;
  const std::string a = tag + "_a", b = tag + "_b";
  EXPECT_GE(rte_eth_from_rings(a.c_str(), &r_ba, 1, &r_ab, 1, SOCKET_ID_ANY),
            0);
  EXPECT_GE(rte_eth_from_rings(b.c_str(), &r_ab, 1, &r_ba, 1, SOCKET_ID_ANY),
            0);
  return RingWire{"net_ring_" + a, "net_ring_" + b};
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_BACKEND_DPDK_RING_WIRE_H_
