#include "verbs_compat/context_stats.h"

#include <cstdio>
#include <cstring>

namespace braid::verbs_compat {

void FillVerbsStats(const EndpointStats& s, const ContextCounters& c,
                    uint64_t zero_copy_in_flight, braid_verbs_stats* out) {
  std::memset(out, 0, sizeof(*out));
  out->datagrams_sent = s.datagrams_sent;
  out->datagrams_received = s.datagrams_received;
  out->retransmits = s.reliability.retransmits;
  out->messages_sent = s.messages_sent;
  out->messages_received = s.messages_received;
  out->malformed = c.malformed;
  out->remote_access_errors =
      c.access_bad_key + c.access_no_permission + c.access_out_of_bounds;
  out->remote_access_bad_key = c.access_bad_key;
  out->remote_access_no_permission = c.access_no_permission;
  out->remote_access_out_of_bounds = c.access_out_of_bounds;
  out->bytes_placed = c.bytes_placed;
  out->bytes_copied = c.bytes_copied;
  out->endpoint_bytes_placed = s.bytes_placed;
  out->endpoint_bytes_reassembled = s.bytes_reassembled;
  out->zero_copy_sends = c.zero_copy_sends;
  out->zero_copy_in_flight = zero_copy_in_flight;
}

void PrintContextStats(const NetAddr& local, const ContextCounters& c,
                       const EndpointStats& s) {
  std::fprintf(stderr,
               "braid0 %s: messages %llu malformed %llu unknown_qp %llu "
               "send_retries %llu transport_failures %llu progress app %llu "
               "thread %llu (spinning %llu) bytes placed %llu copied %llu "
               "refused %llu zero_copy_sends %llu uc_dropped %llu remote "
               "access refused: bad_key %llu no_permission %llu "
               "out_of_bounds %llu\n",
               local.ToString().c_str(),
               static_cast<unsigned long long>(c.messages_received),
               static_cast<unsigned long long>(c.malformed),
               static_cast<unsigned long long>(c.unknown_qp),
               static_cast<unsigned long long>(c.send_retries),
               static_cast<unsigned long long>(c.transport_failures),
               static_cast<unsigned long long>(c.app_progress),
               static_cast<unsigned long long>(c.thread_progress),
               static_cast<unsigned long long>(c.thread_spin_steps),
               static_cast<unsigned long long>(c.bytes_placed),
               static_cast<unsigned long long>(c.bytes_copied),
               static_cast<unsigned long long>(c.placement_refused),
               static_cast<unsigned long long>(c.zero_copy_sends),
               static_cast<unsigned long long>(c.uc_dropped),
               static_cast<unsigned long long>(c.access_bad_key),
               static_cast<unsigned long long>(c.access_no_permission),
               static_cast<unsigned long long>(c.access_out_of_bounds));
  std::fprintf(stderr,
               "braid0 %s: datagrams sent %llu received %llu retransmits "
               "%llu\n",
               local.ToString().c_str(),
               static_cast<unsigned long long>(s.datagrams_sent),
               static_cast<unsigned long long>(s.datagrams_received),
               static_cast<unsigned long long>(s.reliability.retransmits));
}

}  // namespace braid::verbs_compat
