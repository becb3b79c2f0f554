#include "backend/verbs_ud/ud_ah_cache.h"

#include <cerrno>
#include <cstring>

namespace braid::backend {

ibv_ah* UdAhCache::Get(const NetAddr& peer, uint32_t e, uint64_t in_use) {
  auto it = map_.find(peer);
  if (it == map_.end()) {
    if (map_.size() >= cfg_.max_peers) {
      for (auto& [addr, arr] : map_) {
        for (uint32_t i = 0; i < cfg_.entropies; ++i) {
          if (arr[i] != nullptr) retired_.emplace_back(in_use, arr[i]);
        }
      }
      map_.clear();
      ++flushes_;
    }
    auto arr = std::make_unique<ibv_ah*[]>(cfg_.entropies);
    for (uint32_t i = 0; i < cfg_.entropies; ++i) arr[i] = nullptr;
    it = map_.emplace(peer, std::move(arr)).first;
  }
  ibv_ah*& ah = it->second[e];
  if (ah == nullptr) ah = Make(peer, e);
  return ah;
}

ibv_ah* UdAhCache::Make(const NetAddr& peer, uint32_t e) {
  ibv_ah_attr a{};
  a.is_global = 1;
  std::memcpy(a.grh.dgid.raw, peer.ip.data(), 16);
  a.grh.flow_label = FlowLabelOf(e);
  a.grh.sgid_index = cfg_.sgid_index;
  a.grh.hop_limit = 64;
  a.grh.traffic_class = cfg_.traffic_class;
  a.port_num = cfg_.port;
  errno = 0;
  ibv_ah* ah = ops_.create_ah(pd_, &a);
  if (ah == nullptr) {
    last_error_ = errno != 0 ? errno : EINVAL;
    ++failures_;
    return nullptr;
  }
  ++created_;
  return ah;
}

void UdAhCache::Collect(uint64_t completed) {
  size_t keep = 0;
  for (auto& [seq, ah] : retired_) {
    if (seq <= completed) {
      ops_.destroy_ah(ah);
    } else {
      retired_[keep++] = {seq, ah};
    }
  }
  retired_.resize(keep);
}

void UdAhCache::Clear() {
  for (auto& [seq, ah] : retired_) ops_.destroy_ah(ah);
  retired_.clear();
  for (auto& [peer, arr] : map_) {
    for (uint32_t i = 0; i < cfg_.entropies; ++i) {
      if (arr[i] != nullptr) ops_.destroy_ah(arr[i]);
    }
  }
  map_.clear();
}

}  // namespace braid::backend
