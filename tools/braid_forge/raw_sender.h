// Sends IPv4/UDP datagrams with any source address through one raw socket
// (IPPROTO_RAW, so the caller writes the IP header: IP_HDRINCL), in batches
// of one sendmmsg call. Needs CAP_NET_RAW. Buffers are allocated once, at
// Open; queueing a datagram allocates nothing and makes no syscall unless
// the batch is full.
#ifndef BRAID_TOOLS_BRAID_FORGE_RAW_SENDER_H_
#define BRAID_TOOLS_BRAID_FORGE_RAW_SENDER_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tools/braid_forge/ip_udp.h"

namespace braid::forge {

struct RawSenderCounters {
  uint64_t datagrams = 0;  // accepted by the kernel
  uint64_t bytes = 0;      // their IP bytes
  uint64_t syscalls = 0;   // sendmmsg calls
  uint64_t errors = 0;     // datagrams the kernel refused (counted, skipped)
};

class RawSender {
 public:
  // Opens the raw socket with room for `batch` datagrams (1..1024) of up to
  // `max_payload` UDP payload bytes each. PermissionDenied without
  // CAP_NET_RAW; InvalidArgument for a bad size.
  static absl::StatusOr<std::unique_ptr<RawSender>> Open(size_t batch,
                                                         size_t max_payload);
  ~RawSender();
  RawSender(const RawSender&) = delete;
  RawSender& operator=(const RawSender&) = delete;

  // Where the UDP payload of the next datagram goes (max_payload bytes):
  // write it there, then Commit. Valid until the next Commit or Flush.
  absl::Span<uint8_t> NextPayload();
  // Adds the IPv4/UDP headers (WriteIpv4Udp) to the payload just written and
  // queues the datagram; sends the batch when it is full. `payload_len` must
  // be at most max_payload.
  void Commit(size_t payload_len, const Ipv4UdpAddrs& a);
  // Sends every queued datagram (datagrams the kernel refuses are counted in
  // errors and dropped; the first errno is kept in last_errno()).
  void Flush();
  // Queued, not yet sent.
  size_t queued() const { return queued_; }
  const RawSenderCounters& counters() const { return counters_; }
  int last_errno() const { return last_errno_; }

 private:
  RawSender(int fd, size_t batch, size_t slot);

  int fd_;
  size_t batch_;
  size_t slot_;  // bytes per datagram buffer
  std::vector<uint8_t> buf_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<sockaddr_in> dst_;
  size_t queued_ = 0;
  uint16_t ip_id_ = 1;
  RawSenderCounters counters_;
  int last_errno_ = 0;
};

}  // namespace braid::forge

#endif  // BRAID_TOOLS_BRAID_FORGE_RAW_SENDER_H_
