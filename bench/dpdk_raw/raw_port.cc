#include "bench/dpdk_raw/raw_port.h"

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace braid::dpdkraw {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true, std::memory_order_relaxed); }

// Receive buffers: room for a jumbo frame in one mbuf, and for memif's
// bsize up to 10240 (a smaller mbuf than bsize takes memif's slow path).
constexpr uint16_t kRxRoom = RTE_PKTMBUF_HEADROOM + 10240;
constexpr unsigned kRxPoolMbufs = 8191;

// Whether the EAL arguments choose the lcores (-l, -c, --lcores).
bool ChoosesLcores(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (absl::StartsWith(w, "--lcores")) return true;
    if (!absl::StartsWith(w, "--") &&
        (absl::StartsWith(w, "-l") || absl::StartsWith(w, "-c"))) {
      return true;
    }
  }
  return false;
}

// memif's buffer size when its devargs do not set bsize.
constexpr uint32_t kMemifDefaultBsize = 2048;

// Fills port->memif_client (a net_memif port in the client role, memif's
// default) and port->memif_bsize from the port's devargs.
void ReadMemifArgs(Port* port) {
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(port->id, &info) != 0 ||
      info.driver_name == nullptr ||
      std::string(info.driver_name) != "net_memif") {
    return;
  }
  const rte_devargs* devargs =
      info.device != nullptr ? rte_dev_devargs(info.device) : nullptr;
  const std::string args = devargs != nullptr && devargs->args != nullptr
                               ? std::string(devargs->args)
                               : "";
  port->memif_client = !absl::StrContains(args, "role=server");
  port->memif_bsize = kMemifDefaultBsize;
  for (absl::string_view kv : absl::StrSplit(args, ',')) {
    uint32_t bsize = 0;
    if (absl::ConsumePrefix(&kv, "bsize=") && absl::SimpleAtoi(kv, &bsize)) {
      port->memif_bsize = bsize;
    }
  }
}

// How long memif's interrupt thread gets to finish a disconnect.
constexpr useconds_t kMemifSettleMicros = 200000;

// How often a memif client whose link stays down is restarted.
constexpr double kMemifRestartSeconds = 1;

}  // namespace

std::vector<std::string> SplitEalArgs(const std::string& args) {
  return absl::StrSplit(args, ' ', absl::SkipEmpty());
}

absl::Status InitEal(const std::string& args) {
  std::vector<std::string> words = SplitEalArgs(args);
  words.insert(words.begin(), "dpdk-raw");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // The EAL pins the main thread to its first lcore; without lcores in the
  // arguments keep the affinity the process started with (e.g. taskset's),
  // so two instances on one machine do not share a core.
  cpu_set_t affinity;
  const bool restore = !ChoosesLcores(words) &&
                       sched_getaffinity(0, sizeof(affinity), &affinity) == 0;
  rte_openlog_stream(stderr);
  if (rte_eal_init(static_cast<int>(words.size()), argv.data()) < 0) {
    return absl::UnavailableError(absl::StrCat(
        "rte_eal_init(\"", args, "\") failed: ", rte_strerror(rte_errno)));
  }
  if (restore) (void)sched_setaffinity(0, sizeof(affinity), &affinity);
  return absl::OkStatus();
}

void CleanupEal() { rte_eal_cleanup(); }

absl::StatusOr<Port> OpenPort(const std::string& name, uint16_t ring) {
  Port port;
  if (name.empty()) {
    uint16_t id = RTE_MAX_ETHPORTS;
    RTE_ETH_FOREACH_DEV(id) { break; }
    if (id >= RTE_MAX_ETHPORTS) {
      return absl::NotFoundError(
          "no DPDK port (give one with --vdev=... or a PCI device in --eal)");
    }
    port.id = id;
    char buf[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(id, buf) == 0) port.name = buf;
  } else {
    if (rte_eth_dev_get_port_by_name(name.c_str(), &port.id) != 0) {
      return absl::NotFoundError(absl::StrCat("no DPDK port named '", name,
                                              "' (", rte_eth_dev_count_avail(),
                                              " port(s) probed)"));
    }
    port.name = name;
  }
  auto fail = [&](const char* call, int rc) {
    return absl::UnavailableError(
        absl::StrCat("port ", port.name, ": ", call,
                     " failed: ", rte_strerror(rc < 0 ? -rc : rc)));
  };
  rte_eth_conf conf{};
  int rc = rte_eth_dev_configure(port.id, 1, 1, &conf);
  if (rc != 0) return fail("rte_eth_dev_configure", rc);
  uint16_t rx_ring = ring, tx_ring = ring;
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(port.id, &rx_ring, &tx_ring);
  if (rc != 0) return fail("rte_eth_dev_adjust_nb_rx_tx_desc", rc);
  const std::string pool_name = absl::StrCat("rx", port.id);
  port.rx_pool =
      rte_pktmbuf_pool_create(pool_name.c_str(), kRxPoolMbufs, 256, 0, kRxRoom,
                              static_cast<int>(rte_eth_dev_socket_id(port.id)));
  if (port.rx_pool == nullptr) {
    return fail("rte_pktmbuf_pool_create(rx)", rte_errno);
  }
  const int socket = rte_eth_dev_socket_id(port.id);
  rc = rte_eth_rx_queue_setup(port.id, 0, rx_ring, socket, nullptr,
                              port.rx_pool);
  if (rc != 0) return fail("rte_eth_rx_queue_setup", rc);
  rc = rte_eth_tx_queue_setup(port.id, 0, tx_ring, socket, nullptr);
  if (rc != 0) return fail("rte_eth_tx_queue_setup", rc);
  rc = rte_eth_macaddr_get(port.id, &port.mac);
  if (rc != 0) return fail("rte_eth_macaddr_get", rc);
  ReadMemifArgs(&port);
  return port;
}

absl::Status StartPort(Port* port, double seconds) {
  const uint64_t deadline = Tsc() + TscTicks(seconds);
  const uint32_t log_level = rte_log_get_global_level();
  int rc = rte_eth_dev_start(port->id);
  // A memif client cannot start before its server listens: retry quietly
  // (the first failure was logged).
  if (rc != 0) rte_log_set_global_level(RTE_LOG_CRIT);
  while (rc != 0 && Tsc() < deadline && !Stopping()) {
    usleep(100000);
    rc = rte_eth_dev_start(port->id);
  }
  rte_log_set_global_level(log_level);
  port->started = rc == 0;
  if (rc == 0) return absl::OkStatus();
  if (Stopping()) return absl::CancelledError("stopped by a signal");
  return absl::UnavailableError(absl::StrCat(
      "port ", port->name, ": rte_eth_dev_start failed for ", seconds,
      " s (over memif as client: no server on the socket?): ",
      rte_strerror(rc < 0 ? -rc : rc)));
}

bool LinkUp(const Port& port) {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port.id, &link) == 0 &&
         link.link_status == RTE_ETH_LINK_UP;
}

absl::Status WaitLinkUp(Port* port, double seconds) {
  const uint64_t start = Tsc();
  const uint64_t deadline = start + TscTicks(seconds);
  uint64_t restart = start + TscTicks(kMemifRestartSeconds);
  while (!LinkUp(*port)) {
    if (Stopping()) return absl::CancelledError("stopped by a signal");
    const uint64_t now = Tsc();
    if (now >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "port ", port->name, ": link still down after ", seconds,
          " s (over memif: is the peer running, on the same socket?)"));
    }
    if (port->memif_client && now >= restart) {
      (void)rte_eth_dev_stop(port->id);
      port->started = false;
      absl::Status s = StartPort(port, TscNs(deadline - now) / 1e9);
      if (!s.ok()) return s;
      restart = Tsc() + TscTicks(kMemifRestartSeconds);
    }
    usleep(10000);
  }
  return absl::OkStatus();
}

void ClosePort(const Port& port) {
  // The peer's disconnect may still be handled by the interrupt thread
  // (it unmaps the rings) after the link reads down: let it finish before
  // stopping the port, which tears the same rings down from this thread
  // (a server closing right after its client left crashed, rarely, under
  // load).
  if (port.memif_bsize != 0) usleep(kMemifSettleMicros);
  if (port.started) (void)rte_eth_dev_stop(port.id);
  (void)rte_eth_dev_close(port.id);
  // memif sends its disconnect message and handles the peer's from the
  // EAL's interrupt thread: give it time to finish before rte_eal_cleanup
  // unmaps the memory it works on.
  if (port.memif_bsize != 0) usleep(kMemifSettleMicros);
}

uint64_t Tsc() { return rte_rdtsc(); }

uint64_t TscTicks(double seconds) {
  return static_cast<uint64_t>(seconds * static_cast<double>(rte_get_tsc_hz()));
}

double TscNs(uint64_t ticks) {
  return static_cast<double>(ticks) * 1e9 /
         static_cast<double>(rte_get_tsc_hz());
}

void InstallStopHandlers() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

bool Stopping() { return g_stop.load(std::memory_order_relaxed); }

}  // namespace braid::dpdkraw
