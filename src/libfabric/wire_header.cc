#include "libfabric/wire_header.h"

namespace braid::libfabric {
namespace {

void PutLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

constexpr uint8_t kFlagData = 0x01;

}  // namespace

const char* HeaderErrorName(HeaderError e) {
  switch (e) {
    case HeaderError::kNone:
      return "none";
    case HeaderError::kShort:
      return "short";
    case HeaderError::kBadVersion:
      return "bad_version";
    case HeaderError::kBadKind:
      return "bad_kind";
    case HeaderError::kBadFlags:
      return "bad_flags";
  }
  return "unknown";
}

std::array<uint8_t, kHeaderBytes> EncodeHeader(const MsgHeader& h) {
  std::array<uint8_t, kHeaderBytes> out{};
  out[0] = kHeaderVersion;
  out[1] = static_cast<uint8_t>(h.kind);
  out[2] = h.has_data ? kFlagData : 0;
  PutLe64(&out[8], h.tag);
  PutLe64(&out[16], h.has_data ? h.data : 0);
  return out;
}

HeaderError DecodeHeader(absl::Span<const uint8_t> msg, MsgHeader* out) {
  if (msg.size() < kHeaderBytes) return HeaderError::kShort;
  const uint8_t* p = msg.data();
  if (p[0] != kHeaderVersion) return HeaderError::kBadVersion;
  if (p[1] < static_cast<uint8_t>(MsgKind::kMsg) ||
      p[1] > static_cast<uint8_t>(MsgKind::kAtomicResp)) {
    return HeaderError::kBadKind;
  }
  if ((p[2] & ~kFlagData) != 0) return HeaderError::kBadFlags;
  for (int i = 3; i < 8; ++i) {
    if (p[i] != 0) return HeaderError::kBadFlags;
  }
  out->kind = static_cast<MsgKind>(p[1]);
  out->has_data = (p[2] & kFlagData) != 0;
  out->tag = GetLe64(p + 8);
  out->data = GetLe64(p + 16);
  if (out->kind == MsgKind::kMsg && out->tag != 0)
    return HeaderError::kBadFlags;
  if (!out->has_data && out->data != 0) return HeaderError::kBadFlags;
  if (out->kind == MsgKind::kRmaResp && !out->has_data) {
    return HeaderError::kBadFlags;
  }
  if ((out->kind == MsgKind::kReadReq || out->kind == MsgKind::kReadResp ||
       out->kind == MsgKind::kAtomicReq || out->kind == MsgKind::kAtomicResp) &&
      out->has_data) {
    return HeaderError::kBadFlags;
  }
  if (out->kind == MsgKind::kReadReq && msg.size() != kReadReqBytes) {
    return HeaderError::kShort;
  }
  if (out->kind == MsgKind::kAtomicReq) {
    if (msg.size() < kAtomicReqBytes) return HeaderError::kShort;
    if (p[kAtomicReqBytes - 1] != 0) return HeaderError::kBadFlags;
  }
  return HeaderError::kNone;
}

std::array<uint8_t, kReadReqBytes - kHeaderBytes> EncodeReadReq(
    const ReadReq& r) {
  std::array<uint8_t, kReadReqBytes - kHeaderBytes> out{};
  PutLe64(&out[0], r.key);
  PutLe64(&out[8], r.addr);
  PutLe64(&out[16], r.len);
  return out;
}

std::array<uint8_t, kAtomicReqBytes - kHeaderBytes> EncodeAtomicReq(
    const AtomicReq& r) {
  std::array<uint8_t, kAtomicReqBytes - kHeaderBytes> out{};
  PutLe64(&out[0], r.key);
  PutLe64(&out[8], r.addr);
  for (int i = 0; i < 4; ++i)
    out[16 + i] = static_cast<uint8_t>(r.count >> (8 * i));
  out[20] = r.datatype;
  out[21] = r.op;
  out[22] = r.kind;
  return out;
}

AtomicReq DecodeAtomicReq(absl::Span<const uint8_t> msg) {
  AtomicReq r;
  if (msg.size() < kAtomicReqBytes) return r;
  const uint8_t* p = msg.data() + kHeaderBytes;
  r.key = GetLe64(p);
  r.addr = GetLe64(p + 8);
  for (int i = 0; i < 4; ++i) r.count |= uint32_t{p[16 + i]} << (8 * i);
  r.datatype = p[20];
  r.op = p[21];
  r.kind = p[22];
  return r;
}

ReadReq DecodeReadReq(absl::Span<const uint8_t> msg) {
  ReadReq r;
  if (msg.size() < kReadReqBytes) return r;
  const uint8_t* p = msg.data() + kHeaderBytes;
  r.key = GetLe64(p);
  r.addr = GetLe64(p + 8);
  r.len = GetLe64(p + 16);
  return r;
}

}  // namespace braid::libfabric
