// Completions: how an endpoint reports finished sends and received messages.
#ifndef BRAID_COMPLETION_H_
#define BRAID_COMPLETION_H_

#include <cstdint>
#include <vector>

#include "braid/address.h"

namespace braid {

enum class CompletionType : uint8_t {
  kSendDone,    // every byte was acknowledged by the peer
  kSendFailed,  // the message was not (or not provably) delivered; see cause
  kRecv,        // a message arrived, complete and exactly once
};

enum class FailureCause : uint8_t {
  kNone = 0,
  kPeerUnreachable,  // no answer from the peer within peer_timeout
  kPeerRestarted,    // the peer came back with a new incarnation
  kClosed,           // the endpoint was closed with the send in flight
  kPeerEvicted,      // the peer table needed the slot (only idle peers are
                     // evicted, so this is reported for queued sends only)
};
const char* FailureCauseName(FailureCause c);

struct Completion {
  CompletionType type = CompletionType::kRecv;
  FailureCause cause = FailureCause::kNone;
  NetAddr peer;
  uint16_t stream = 0;        // ordered stream id, 0 = unordered
  uint64_t cookie = 0;        // the caller's cookie (send completions)
  std::vector<uint8_t> data;  // the message (kRecv)
};

}  // namespace braid

#endif  // BRAID_COMPLETION_H_
