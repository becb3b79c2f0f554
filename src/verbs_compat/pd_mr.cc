#include "verbs_compat/pd_mr.h"

#include <cstring>

#include "verbs_compat/context.h"

namespace braid::verbs_compat {

Pd::Pd(Context* ctx) : ctx_(ctx) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  shell_.ibv.context = ctx->ibv();
  shell_.ibv.handle = ctx->NextHandle();
  shell_.owner = this;
}

Mr::Mr(Pd* pd, void* addr, size_t length, uint64_t iova, int access,
       uint32_t key)
    : pd_(pd),
      addr_(static_cast<uint8_t*>(addr)),
      iova_(iova),
      length_(length),
      access_(access),
      key_(key) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  shell_.ibv.context = pd->ibv()->context;
  shell_.ibv.pd = pd->ibv();
  shell_.ibv.addr = addr;
  shell_.ibv.length = length;
  shell_.ibv.handle = key;
  shell_.ibv.lkey = key;
  shell_.ibv.rkey = key;
  shell_.owner = this;
}

uint8_t* Mr::Translate(uint64_t iova, uint64_t len) const {
  if (iova < iova_) return nullptr;
  const uint64_t off = iova - iova_;
  if (off > length_ || len > length_ - off) return nullptr;
  return addr_ + off;
}

AccessResult MrTable::CheckRemote(uint32_t rkey, const Pd* pd, uint64_t addr,
                                  uint64_t len, int need, uint8_t** out) const {
  const Mr* mr = Find(rkey);
  if (mr == nullptr) return AccessResult::kBadKey;
  if (mr->pd() != pd) return AccessResult::kWrongPd;
  if ((mr->access() & need) != need) return AccessResult::kNoPermission;
  uint8_t* p = mr->Translate(addr, len);
  if (p == nullptr) return AccessResult::kOutOfBounds;
  *out = p;
  return AccessResult::kOk;
}

AccessResult MrTable::CheckLocal(const ibv_sge& sge, const Pd* pd, bool write,
                                 uint8_t** out) const {
  if (sge.length == 0) {
    *out = nullptr;
    return AccessResult::kOk;
  }
  const Mr* mr = Find(sge.lkey);
  if (mr == nullptr) return AccessResult::kBadKey;
  if (mr->pd() != pd) return AccessResult::kWrongPd;
  if (write && !(mr->access() & IBV_ACCESS_LOCAL_WRITE)) {
    return AccessResult::kNoPermission;
  }
  // Local SGEs carry virtual addresses of the region (iova == addr for
  // ordinary registrations).
  uint8_t* p = mr->Translate(sge.addr, sge.length);
  if (p == nullptr) return AccessResult::kOutOfBounds;
  *out = p;
  return AccessResult::kOk;
}

}  // namespace braid::verbs_compat
