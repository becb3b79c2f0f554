#include "backend/dpdk/dpdk_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/entropy_count.h"

namespace braid::backend::dpdk {
namespace {

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("EndpointOptions.dpdk.", field, ": ", what));
}

absl::StatusOr<std::optional<MacAddr>> OptionalMac(absl::string_view field,
                                                   const std::string& s) {
  if (s.empty()) return std::optional<MacAddr>();
  absl::StatusOr<MacAddr> m = ParseMac(s);
  if (!m.ok()) return FieldError(field, m.status().message());
  return std::optional<MacAddr>(*m);
}

}  // namespace

absl::StatusOr<DpdkOptions> DpdkOptionsFrom(const EndpointOptions& options,
                                            const NetAddr& bind,
                                            uint64_t random) {
  const DpdkBackendOptions& d = options.dpdk;
  DpdkOptions o;
  o.eal_args = d.eal_args;
  o.port.name = d.port;
  if (d.rx_ring != 0) o.port.rx_ring = d.rx_ring;
  if (d.tx_ring != 0) o.port.tx_ring = d.tx_ring;
  if (d.mbufs != 0) o.port.mbufs = d.mbufs;
  o.port.mtu = options.mtu;
  o.port.checksum_offload = d.checksum_offload;
  o.ecn = d.ecn;
  if (bind.IsWildcard()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EndpointOptions.bind: ", bind.ToString(),
        " is the any-address; the dpdk backend needs the endpoint's own IP"));
  }
  o.bind = bind;
  if (o.bind.port == 0) {
    o.bind.port = static_cast<uint16_t>(32768 + random % 16384);
  }
  const bool v6 = bind.family == NetAddr::Family::kIpv6;
  const uint32_t min_mtu = v6 ? 1280 : 576;
  if (options.mtu < min_mtu || options.mtu > 9702) {
    return absl::InvalidArgumentError(
        absl::StrCat("EndpointOptions.mtu: ", options.mtu, " is outside ",
                     min_mtu, "..9702 for the dpdk backend"));
  }
  absl::StatusOr<std::optional<MacAddr>> local =
      OptionalMac("local_mac", d.local_mac);
  if (!local.ok()) return local.status();
  o.local_mac = *local;
  absl::StatusOr<std::optional<MacAddr>> hop =
      OptionalMac("next_hop_mac", d.next_hop_mac);
  if (!hop.ok()) return hop.status();
  o.next_hop_mac = *hop;
  if (!d.gateway.empty()) {
    absl::StatusOr<NetAddr> gw = NetAddr::Parse(
        absl::StrCat(v6 ? "[" : "", d.gateway, v6 ? "]" : "", ":1"));
    if (!gw.ok() || gw->family != bind.family) {
      return FieldError("gateway",
                        absl::StrCat("\"", d.gateway, "\" is not an IPv",
                                     v6 ? "6" : "4", " address"));
    }
    o.gateway = *gw;
  }
  const uint32_t max_prefix = v6 ? 128 : 32;
  o.prefix_len = d.prefix_len != 0 ? d.prefix_len : (v6 ? 64 : 24);
  if (o.prefix_len > max_prefix) {
    return FieldError("prefix_len",
                      absl::StrCat(d.prefix_len, " exceeds ", max_prefix));
  }
  o.num_entropies =
      d.entropies != 0 ? d.entropies : DefaultEntropyCount(options.protocol);
  if (o.num_entropies > 256) {
    return FieldError("entropies", absl::StrCat(d.entropies, " exceeds 256"));
  }
  o.src_port_base = d.src_port_base != 0 ? d.src_port_base : 49152;
  if (uint32_t{o.src_port_base} + o.num_entropies > 65536) {
    return FieldError("src_port_base",
                      absl::StrCat(o.src_port_base, " + ", o.num_entropies,
                                   " entropies runs past port 65535"));
  }
  return o;
}

}  // namespace braid::backend::dpdk
