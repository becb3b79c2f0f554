#include "tools/braid_forge/raw_sender.h"

#include <arpa/inet.h>
#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace braid::forge {

absl::StatusOr<std::unique_ptr<RawSender>> RawSender::Open(size_t batch,
                                                           size_t max_payload) {
  if (batch < 1 || batch > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("raw sender: batch ", batch, " outside 1..1024"));
  }
  if (max_payload < 1 || max_payload > kMaxUdpPayload) {
    return absl::InvalidArgumentError(absl::StrCat(
        "raw sender: payload ", max_payload, " outside 1..", kMaxUdpPayload));
  }
  const int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
  if (fd < 0) {
    const int e = errno;
    const std::string what =
        absl::StrCat("raw sender: socket(AF_INET, SOCK_RAW, IPPROTO_RAW): ",
                     std::strerror(e), " (needs CAP_NET_RAW: run as root)");
    if (e == EPERM || e == EACCES) return absl::PermissionDeniedError(what);
    return absl::InternalError(what);
  }
  // A large send buffer: a batch must not block half-way.
  const int sndbuf = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  return std::unique_ptr<RawSender>(
      new RawSender(fd, batch, kIpUdpHeaderSize + max_payload));
}

RawSender::RawSender(int fd, size_t batch, size_t slot)
    : fd_(fd),
      batch_(batch),
      slot_(slot),
      buf_(batch * slot),
      msgs_(batch),
      iov_(batch),
      dst_(batch) {
  for (size_t i = 0; i < batch; ++i) {
    iov_[i].iov_base = buf_.data() + i * slot;
    dst_[i].sin_family = AF_INET;
    msgs_[i].msg_hdr = {};
    msgs_[i].msg_hdr.msg_name = &dst_[i];
    msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

RawSender::~RawSender() {
  Flush();
  close(fd_);
}

absl::Span<uint8_t> RawSender::NextPayload() {
  return {buf_.data() + queued_ * slot_ + kIpUdpHeaderSize,
          slot_ - kIpUdpHeaderSize};
}

void RawSender::Commit(size_t payload_len, const Ipv4UdpAddrs& a) {
  uint8_t* d = buf_.data() + queued_ * slot_;
  const size_t len = WriteIpv4Udp(a, ip_id_++, payload_len, {d, slot_});
  if (len == 0) {
    ++counters_.errors;  // payload longer than the slot: a caller bug
    return;
  }
  iov_[queued_].iov_len = len;
  dst_[queued_].sin_addr.s_addr = htonl(a.dst_ip);
  dst_[queued_].sin_port = 0;  // raw: the port is in our UDP header
  if (++queued_ == batch_) Flush();
}

void RawSender::Flush() {
  size_t done = 0;
  while (done < queued_) {
    ++counters_.syscalls;
    const int n = sendmmsg(fd_, msgs_.data() + done,
                           static_cast<unsigned>(queued_ - done), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (last_errno_ == 0) last_errno_ = errno;
      ++counters_.errors;  // skip the refused datagram
      ++done;
      continue;
    }
    for (int i = 0; i < n; ++i) {
      counters_.bytes += iov_[done + static_cast<size_t>(i)].iov_len;
    }
    counters_.datagrams += static_cast<uint64_t>(n);
    done += static_cast<size_t>(n);
  }
  queued_ = 0;
}

}  // namespace braid::forge
