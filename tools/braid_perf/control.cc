#include "tools/braid_perf/control.h"

#include <cstring>
#include <initializer_list>

namespace braid::perf {
namespace {

std::vector<uint8_t> Encode(Kind kind, uint32_t run,
                            std::initializer_list<uint64_t> fields) {
  std::vector<uint8_t> out(kHeaderBytes + 8 * fields.size());
  Header h;
  h.kind = kind;
  h.run = run;
  // The header only (no stamps: control bodies follow it directly).
  const uint16_t magic = kMagic;
  std::memcpy(out.data(), &magic, 2);
  out[2] = static_cast<uint8_t>(kind);
  out[3] = 0;
  std::memcpy(out.data() + 4, &h.run, 4);
  std::memcpy(out.data() + 8, &h.id, 8);
  size_t off = kHeaderBytes;
  for (uint64_t f : fields) {
    std::memcpy(out.data() + off, &f, 8);
    off += 8;
  }
  return out;
}

// Reads `n` fields of a message of `kind`; false if malformed.
bool Fields(absl::Span<const uint8_t> msg, Kind kind, size_t n, uint64_t* out) {
  Header h;
  if (!ReadHeader(msg, &h) || h.kind != kind) return false;
  if (msg.size() != kHeaderBytes + 8 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&out[i], msg.data() + kHeaderBytes + 8 * i, 8);
  }
  return true;
}

}  // namespace

std::vector<uint8_t> EncodeHello(uint32_t run, const HelloMsg& m) {
  return Encode(Kind::kHello, run,
                {static_cast<uint64_t>(m.test), m.size, m.verify ? 1u : 0u});
}
std::vector<uint8_t> EncodeHelloAck(uint32_t run) {
  return Encode(Kind::kHelloAck, run, {});
}
std::vector<uint8_t> EncodeBusy(uint32_t run) {
  return Encode(Kind::kBusy, run, {});
}
std::vector<uint8_t> EncodeDone(uint32_t run, const DoneMsg& m) {
  return Encode(Kind::kDone, run, {m.sent, m.bytes});
}
std::vector<uint8_t> EncodeResult(uint32_t run, const ResultMsg& m) {
  return Encode(Kind::kResult, run,
                {m.received, m.bytes, m.duplicates, m.bad, m.missing, m.foreign,
                 m.first_bad, m.recv_ns, m.datagrams_sent, m.datagrams_received,
                 m.tx_syscalls, m.rx_syscalls, m.retransmits, m.allocations});
}
std::vector<uint8_t> EncodeBye(uint32_t run) {
  return Encode(Kind::kBye, run, {});
}

std::optional<HelloMsg> DecodeHello(absl::Span<const uint8_t> msg) {
  uint64_t f[3];
  if (!Fields(msg, Kind::kHello, 3, f)) return std::nullopt;
  if (f[0] > static_cast<uint64_t>(Test::kRate)) return std::nullopt;
  if (f[1] < kMinMessageBytes || f[1] > kMaxMessageBytes) return std::nullopt;
  HelloMsg m;
  m.test = static_cast<Test>(f[0]);
  m.size = static_cast<uint32_t>(f[1]);
  m.verify = f[2] != 0;
  return m;
}

std::optional<DoneMsg> DecodeDone(absl::Span<const uint8_t> msg) {
  uint64_t f[2];
  if (!Fields(msg, Kind::kDone, 2, f)) return std::nullopt;
  return DoneMsg{f[0], f[1]};
}

std::optional<ResultMsg> DecodeResult(absl::Span<const uint8_t> msg) {
  uint64_t f[14];
  if (!Fields(msg, Kind::kResult, 14, f)) return std::nullopt;
  ResultMsg m;
  m.received = f[0];
  m.bytes = f[1];
  m.duplicates = f[2];
  m.bad = f[3];
  m.missing = f[4];
  m.foreign = f[5];
  m.first_bad = f[6];
  m.recv_ns = f[7];
  m.datagrams_sent = f[8];
  m.datagrams_received = f[9];
  m.tx_syscalls = f[10];
  m.rx_syscalls = f[11];
  m.retransmits = f[12];
  m.allocations = f[13];
  return m;
}

}  // namespace braid::perf
