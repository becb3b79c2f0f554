// Appends an NFQUEUE rule to an nftables chain over raw netlink.
//
// This kernel is built without nft's native `queue` expression
// (CONFIG_NFT_QUEUE), but with nft_compat and xtables' NFQUEUE target; the
// `nft` tool cannot write a compat target, and iptables may be absent. So
// braid-nfq-delay installs its own rule: one `xt NFQUEUE` target expression.
#ifndef BRAID_TOOLS_FABRIC_NFT_QUEUE_RULE_H_
#define BRAID_TOOLS_FABRIC_NFT_QUEUE_RULE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace braid::fabric {

// Where the rule goes and what it does.
struct NfqueueRule {
  uint8_t family = 2;   // NFPROTO_IPV4; the table's family
  std::string table;    // must exist
  std::string chain;    // must exist (a regular chain is fine)
  uint16_t queue = 0;   // NFQUEUE number
  bool bypass = false;  // accept packets while no program listens
};

// Appends `rule` in the calling thread's network namespace. Returns the
// kernel's error (e.g. NotFound for a missing chain) on failure.
absl::Status AppendNfqueueRule(const NfqueueRule& rule);

}  // namespace braid::fabric

#endif  // BRAID_TOOLS_FABRIC_NFT_QUEUE_RULE_H_
