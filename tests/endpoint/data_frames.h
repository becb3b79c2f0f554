// Test helper: reads the data frame out of a datagram a core sent, and
// writes a datagram from one, so tests can forge variations of real frames
// (a re-send, a second message under the same stream_seq, ...).
#ifndef BRAID_TESTS_ENDPOINT_DATA_FRAMES_H_
#define BRAID_TESTS_ENDPOINT_DATA_FRAMES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "wire/frames.h"

namespace braid::endpoint::testing {

struct DataFrame {
  uint16_t reply_port = 0;  // from the datagram's preamble
  wire::DataHeader h;
  std::vector<uint8_t> payload;
};

// The first data frame of `datagram` (on `stream` if given), if any.
inline std::optional<DataFrame> FindDataFrame(
    absl::Span<const uint8_t> datagram,
    std::optional<uint16_t> stream = std::nullopt) {
  wire::ParseError e;
  DataFrame d;
  d.reply_port = wire::ParsePreamble(datagram, &e);
  if (d.reply_port == 0) return std::nullopt;
  wire::FrameReader r(datagram.subspan(wire::kPreambleSize));
  wire::Frame f;
  while (r.Next(&f)) {
    if (f.type != wire::FrameType::kData) continue;
    if (stream.has_value() && f.data.stream_id != *stream) continue;
    d.h = f.data;
    d.payload.assign(f.payload, f.payload + f.data.payload_len);
    return d;
  }
  return std::nullopt;
}

// A datagram holding `d` alone, with header `h` (d.h or a variation of it).
inline std::vector<uint8_t> DataDatagram(const DataFrame& d,
                                         const wire::DataHeader& h) {
  std::vector<uint8_t> out(d.payload.size() + 512);  // + preamble, header
  size_t n = wire::WritePreamble(d.reply_port, absl::MakeSpan(out));
  n += wire::WriteData(h, d.payload, absl::MakeSpan(out).subspan(n));
  out.resize(n);
  return out;
}

}  // namespace braid::endpoint::testing

#endif  // BRAID_TESTS_ENDPOINT_DATA_FRAMES_H_
