// Address handles of braid0 (UD destinations).
#ifndef BRAID_VERBS_COMPAT_AH_H_
#define BRAID_VERBS_COMPAT_AH_H_

#include <infiniband/verbs.h>

#include <cstring>

#include "braid/address.h"
#include "verbs_compat/shell.h"

namespace braid::verbs_compat {

class Pd;

class Ah {
 public:
  Ah(ibv_pd* pd, uint32_t handle, const ibv_ah_attr& attr, const NetAddr& dest)
      : attr_(attr), dest_(dest) {
    std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
    shell_.ibv.context = pd->context;
    shell_.ibv.pd = pd;
    shell_.ibv.handle = handle;
    shell_.owner = this;
  }
  ibv_ah* ibv() { return &shell_.ibv; }
  static Ah* From(const ibv_ah* p) { return Shell<ibv_ah, Ah>::OwnerOf(p); }
  const NetAddr& dest() const { return dest_; }
  const ibv_ah_attr& attr() const { return attr_; }
  // The path hint of every UD send through this AH (SendOptions::flow):
  // the GRH's 20-bit flow label, 0 (none: sprayed) without a GRH. As a
  // RoCE v2 NIC derives the UDP source port from the flow label, braid0's
  // endpoint sends a flow label's datagrams from one source port.
  uint32_t flow() const {
    return attr_.is_global ? attr_.grh.flow_label & 0xFFFFFu : 0;
  }

 private:
  Shell<ibv_ah, Ah> shell_;
  ibv_ah_attr attr_;
  NetAddr dest_;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_AH_H_
