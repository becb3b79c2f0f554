#include "tools/fabric/nft_queue_rule.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace braid::fabric {
namespace {

// A growing netlink message buffer with nested-attribute support.
class NlBuffer {
 public:
  // Starts a message; returns its offset for Finish().
  size_t Begin(uint16_t type, uint16_t flags, uint32_t seq, uint8_t family,
               uint16_t res_id) {
    size_t at = buf_.size();
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    Append(&h, sizeof(h));
    nfgenmsg g{};
    g.nfgen_family = family;
    g.version = NFNETLINK_V0;
    g.res_id = htons(res_id);
    Append(&g, sizeof(g));
    return at;
  }
  void Finish(size_t at) { SetLen(at, buf_.size() - at); }

  void Attr(uint16_t type, const void* data, size_t len) {
    nlattr a{};
    a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
    a.nla_type = type;
    Append(&a, sizeof(a));
    Append(data, len);
    Pad();
  }
  void Str(uint16_t type, const std::string& s) {
    Attr(type, s.c_str(), s.size() + 1);
  }
  void Be32(uint16_t type, uint32_t v) {
    uint32_t be = htonl(v);
    Attr(type, &be, sizeof(be));
  }
  size_t Nest(uint16_t type) {
    size_t at = buf_.size();
    nlattr a{};
    a.nla_type = static_cast<uint16_t>(type | NLA_F_NESTED);
    Append(&a, sizeof(a));
    return at;
  }
  void EndNest(size_t at) {
    uint16_t len = static_cast<uint16_t>(buf_.size() - at);
    std::memcpy(buf_.data() + at, &len, sizeof(len));
  }

  const std::vector<uint8_t>& bytes() const { return buf_; }

 private:
  void Append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + n);
  }
  void Pad() { buf_.resize(NLA_ALIGN(buf_.size()), 0); }
  void SetLen(size_t at, size_t len) {
    uint32_t l = static_cast<uint32_t>(len);
    std::memcpy(buf_.data() + at, &l, sizeof(l));
  }
  std::vector<uint8_t> buf_;
};

}  // namespace

absl::Status AppendNfqueueRule(const NfqueueRule& rule) {
  constexpr uint32_t kSeq = 1;
  NlBuffer b;
  size_t m = b.Begin(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 0, AF_UNSPEC,
                     NFNL_SUBSYS_NFTABLES);
  b.Finish(m);

  m = b.Begin((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
              NLM_F_REQUEST | NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, kSeq,
              rule.family, 0);
  b.Str(NFTA_RULE_TABLE, rule.table);
  b.Str(NFTA_RULE_CHAIN, rule.chain);
  size_t exprs = b.Nest(NFTA_RULE_EXPRESSIONS);
  size_t elem = b.Nest(NFTA_LIST_ELEM);
  b.Str(NFTA_EXPR_NAME, "target");
  size_t data = b.Nest(NFTA_EXPR_DATA);
  b.Str(NFTA_TARGET_NAME, "NFQUEUE");
  b.Be32(NFTA_TARGET_REV, 3);
  // xtables' info struct, host byte order, padded to XT_ALIGN (8 bytes).
  uint8_t info[8] = {};
  xt_NFQ_info_v3 q{};
  q.queuenum = rule.queue;
  q.queues_total = 1;
  q.flags = rule.bypass ? NFQ_FLAG_BYPASS : 0;
  std::memcpy(info, &q, sizeof(q));
  b.Attr(NFTA_TARGET_INFO, info, sizeof(info));
  b.EndNest(data);
  b.EndNest(elem);
  b.EndNest(exprs);
  b.Finish(m);

  m = b.Begin(NFNL_MSG_BATCH_END, NLM_F_REQUEST, 2, AF_UNSPEC,
              NFNL_SUBSYS_NFTABLES);
  b.Finish(m);

  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0)
    return absl::InternalError(
        absl::StrCat("netlink socket: ", std::strerror(errno)));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const auto& bytes = b.bytes();
  if (sendto(fd, bytes.data(), bytes.size(), 0,
             reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    int e = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("netlink send: ", strerror(e)));
  }
  // Read until the acknowledgement (or error) of the rule message arrives.
  std::vector<uint8_t> reply(16384);
  for (;;) {
    ssize_t n = recv(fd, reply.data(), reply.size(), 0);
    if (n < 0) {
      int e = errno;
      close(fd);
      return absl::InternalError(absl::StrCat("netlink recv: ", strerror(e)));
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(reply.data());
         NLMSG_OK(h, static_cast<uint32_t>(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != NLMSG_ERROR) continue;
      const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (h->nlmsg_seq != kSeq && err->error == 0) continue;
      close(fd);
      if (err->error == 0) return absl::OkStatus();
      std::string what =
          absl::StrCat("adding NFQUEUE rule to ", rule.table, " ", rule.chain,
                       ": ", std::strerror(-err->error));
      return err->error == -ENOENT ? absl::NotFoundError(what)
                                   : absl::InternalError(what);
    }
  }
}

}  // namespace braid::fabric
