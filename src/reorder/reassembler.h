// Out-of-order message reassembly by direct placement: each fragment is
// copied straight to its offset in the message's buffer — or, for a placed
// message (the sender attached a placement descriptor), straight into the
// destination the receiver's placement function names, with no message
// buffer at all (only the message's head is buffered).
//
// Memory is committed as fragments land, in chunks (chunk_bytes), never at
// the message length: the buffer holds the chunks from byte 0 up to the
// first one no fragment has reached; a fragment further ahead lands in a
// chunk of its own (drawn from the pool), copied into the buffer once the
// chunks before it are reached. A message that arrives in order, or with
// the few datagrams of reordering that spraying brings, never uses such a
// chunk and costs one copy per byte.
#ifndef BRAID_REORDER_REASSEMBLER_H_
#define BRAID_REORDER_REASSEMBLER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "reorder/buffer_pool.h"
#include "reorder/completed_message.h"
#include "reorder/coverage.h"
#include "reorder/reassembly_budget.h"
#include "wire/psn.h"

namespace braid::reorder {

struct ReassemblerOptions {
  // Memory this reassembler may commit to partial messages (chunks,
  // coverage ranges, bookkeeping). A fragment that would exceed it is
  // refused with kNoMemory (transient).
  uint64_t max_bytes = uint64_t{256} << 20;  // 256 MiB
  // Messages longer than this are refused as kMalformed (permanent).
  // 0 = same as max_bytes.
  uint64_t max_message_bytes = 0;
  // At most this many partial messages at once; beyond: kNoMemory.
  uint32_t max_partial_messages = 65536;
  // Placed messages: the head (bytes before the placed part, delivered with
  // the completion) may be at most this long; beyond: kMalformed.
  uint32_t max_placement_head = 4096;
  // Buffer pool for message buffers (not owned; must outlive the
  // Reassembler). nullptr = an internal pool. The constructor's `pool`
  // argument, if non-null, takes precedence.
  BufferPool* pool = nullptr;
  // Unit of commitment, a power of two: a fragment commits the chunks of
  // the message it touches that no earlier fragment touched.
  uint32_t chunk_bytes = 64u << 10;
  // The endpoint-wide account this reassembler also commits to (not owned;
  // must outlive it). nullptr = no endpoint-wide limit.
  ReassemblyBudget* budget = nullptr;
  // Of each fragment of a message that is not placed, only the first this
  // many bytes are written into the message's buffer; the rest of its range
  // keeps whatever the buffer held (zeros, or an earlier message's bytes).
  // Only for simulations whose packets carry just the first bytes of each
  // payload (braid-sim --payload checksum). Default: every byte.
  uint32_t fragment_copy_limit = UINT32_MAX;
};

// Dropped fragments by reason, plus throughput counters.
struct ReassemblerStats {
  uint64_t fragments = 0;  // OnFragment calls
  uint64_t messages_completed = 0;
  uint64_t single_fragment_messages = 0;  // of which completed at once
  uint64_t bytes_completed = 0;
  uint64_t malformed_out_of_bounds = 0;  // offset + len > msg_len
  uint64_t malformed_inconsistent = 0;   // msg_len/stream fields disagree
  uint64_t malformed_bad_layout = 0;  // empty fragment of a non-empty message
  uint64_t malformed_overlap = 0;     // overlaps bytes already placed
  uint64_t malformed_too_large = 0;   // msg_len > max_message_bytes
  uint64_t no_memory = 0;             // refused: memory/partial limit
  uint64_t no_memory_endpoint = 0;    // of which: the endpoint-wide budget
  uint64_t side_chunks = 0;           // chunks committed ahead of the buffer
  uint64_t cleared_messages = 0;      // partials dropped by Clear()
  uint64_t malformed_placement = 0;   // head longer than allowed
  uint64_t messages_placed = 0;       // completed, placed directly
  uint64_t messages_refused = 0;      // completed, placement refused
  uint64_t bytes_placed = 0;          // written straight into destinations
  uint64_t bytes_copied = 0;  // written into message buffers (incl. heads)
};

// One data fragment as parsed from the wire.
struct Fragment {
  wire::MsgSeq msg{0};
  uint16_t stream_id = 0;
  uint32_t stream_seq = 0;
  uint32_t msg_len = 0;
  uint32_t offset = 0;
  absl::Span<const uint8_t> payload;
  // Non-null for a fragment of a placed message (the same descriptor in
  // every fragment): bytes [head_len, msg_len) go where the placement
  // function says, bytes before head_len are buffered as the head.
  const wire::PlacementExt* placement = nullptr;
};

// Resolves where a placed message goes, asked for each placed fragment that
// passed validation (so a destination can be re-checked per fragment).
// Returns false to refuse; otherwise sets *dest to memory for bytes
// [head_len, msg_len) of the message (at least that many bytes).
using PlaceFn =
    absl::FunctionRef<bool(const Fragment& f, absl::Span<uint8_t>* dest)>;

// Reassembles messages of one peer pair. The caller filters duplicate PSNs
// first (ReceiveWindow); this class still rejects overlap so a forged or
// buggy fragment can never complete a message early.
//
// Fragment layout rule: fragments may have any sizes (> 0 bytes) as long as
// they do not overlap; the message completes when they cover [0, msg_len).
// A 0-byte message is one fragment with 0 bytes. (Senders fill each datagram,
// so a datagram may end one message and start the next: see
// docs/protocol.md, "Fragmentation".)
class Reassembler {
 public:
  enum class FragResult {
    kPartial,    // placed; message not yet complete
    kComplete,   // placed; *out holds the whole message
    kMalformed,  // dropped: caller counts it (resending cannot fix it)
    kNoMemory,   // dropped: caller must NOT record the PSN (will be resent)
  };

  // `pool` (else options.pool) supplies message buffers; if both are null an
  // internal pool is used. An external pool must outlive this object.
  explicit Reassembler(const ReassemblerOptions& options = ReassemblerOptions(),
                       BufferPool* pool = nullptr);
  // Gives the partial messages' memory back (pool, budget).
  ~Reassembler();
  Reassembler(const Reassembler&) = delete;
  Reassembler& operator=(const Reassembler&) = delete;

  // Places `f`. On kComplete, *out is overwritten with the message (its
  // previous data buffer is returned to the pool first). A placed fragment
  // goes through `place` after it passed every check, so nothing is written
  // for a fragment that is then dropped. Once `place` refuses, the message
  // is refused for good: no later fragment of it is written anywhere, and
  // it completes with Placement::kRefused (its head still delivered).
  FragResult OnFragment(const Fragment& f, PlaceFn place,
                        CompletedMessage* out);
  // As above, for callers without placement: placed messages are refused.
  FragResult OnFragment(const Fragment& f, CompletedMessage* out);

  // Whether the peer has proven itself (ReassemblyBudget::TryCommit): set
  // before each fragment by the caller.
  void set_proven(bool proven) { proven_ = proven; }
  // The last kNoMemory came from the endpoint-wide budget (not this
  // reassembler's own limits).
  bool last_refusal_endpoint() const { return last_refusal_endpoint_; }

  // Bytes the partial messages will occupy once complete (placed messages:
  // heads only): what credit must allow for.
  uint64_t bytes_buffered() const { return bytes_buffered_; }
  // Bytes committed (charged against max_bytes and the budget): chunks,
  // coverage ranges, bookkeeping.
  uint64_t memory_used() const { return memory_used_; }
  size_t partial_messages() const { return partials_.size(); }

  // Drops all partial messages (peer restarted / SYNC); buffers go back to
  // the pool.
  void Clear();

  // The buffer pool; give consumed CompletedMessage::data back via Put().
  BufferPool& pool() { return *pool_; }
  const ReassemblerStats& stats() const { return stats_; }

 private:
  // A chunk committed ahead of the buffer's chunks.
  struct SideChunk {
    uint32_t index = 0;
    std::vector<uint8_t> bytes;  // from the chunk's first byte
  };
  struct Partial {
    uint16_t stream_id = 0;
    uint32_t stream_seq = 0;
    uint32_t msg_len = 0;
    uint64_t charged = 0;   // committed: memory_used_ and the budget
    uint64_t reserved = 0;  // data's capacity, as counted in the budget
    uint32_t buffered = 0;  // buffer length (msg_len or head), in
                            // bytes_buffered_
    uint32_t chunks = 0;    // chunks [0, chunks) of `data` are committed
    Coverage seen;          // byte ranges arrived
    // The message, or (placed) only its head, from byte 0: its committed
    // chunks.
    std::vector<uint8_t> data;
    absl::InlinedVector<SideChunk, 1> side;  // by index, all >= chunks + 1
    bool placed = false;
    bool refused = false;  // placement refused: nothing more is written
    wire::PlacementExt ext;
  };

  using PartialMap = absl::flat_hash_map<uint32_t, Partial>;

  FragResult Malformed(uint64_t* counter);

  // The steps of OnFragment, inlined into it (reassembler.cc):
  // The malformed counter f's layout breaks (too large, out of bounds, a bad
  // placement head), or null if it is well formed.
  uint64_t* LayoutError(const Fragment& f);
  // f carries a whole message: delivers it into *out at once.
  FragResult CompleteWhole(const Fragment& f, uint32_t buf_len, PlaceFn place,
                           CompletedMessage* out);
  // Creates the partial message f begins (its bookkeeping charged; no
  // buffer yet), or returns end() if there is no memory for it.
  PartialMap::iterator StartPartial(uint32_t key, const Fragment& f,
                                    uint32_t buf_len);
  // Charges `n` committed bytes to p; false (nothing charged) if a limit
  // refuses them.
  bool Charge(Partial& p, uint64_t n);
  // Commits every chunk of buffer bytes [begin, end) not yet committed.
  bool CommitRange(Partial& p, uint64_t begin, uint64_t end);
  // Makes p.data's capacity reach `need` bytes.
  void GrowBuffer(Partial& p, uint64_t need);
  // Writes buffer bytes [off, off + n) of p: into the buffer, or into the
  // side chunks holding them.
  // (Only src[0, copy) is written: fragment_copy_limit.)
  void WriteBuffer(Partial& p, uint64_t off, const uint8_t* src, uint64_t n,
                   uint64_t copy);
  // True if f belongs to the message p as its earlier fragments described it.
  static bool Matches(const Partial& p, const Fragment& f);
  // Records f in the partial message at `it` (which f `created`: undone if f
  // is malformed); completes the message into *out when f is its last gap.
  FragResult AddToPartial(PartialMap::iterator it, bool created,
                          const Fragment& f, PlaceFn place,
                          CompletedMessage* out);
  // Copies f's bytes: to the message buffer, or (placed) the head part to
  // the buffer and the rest through `place` unless refused.
  void Store(Partial& p, const Fragment& f, PlaceFn place);
  FragResult Complete(uint32_t key, Partial& p, CompletedMessage* out);
  void Release(Partial& p);

  ReassemblerOptions options_;
  std::unique_ptr<BufferPool> own_pool_;
  BufferPool* pool_;
  PartialMap partials_;
  ReassemblyBudget own_budget_;
  ReassemblyBudget* budget_;
  uint32_t chunk_shift_;
  uint64_t bytes_buffered_ = 0;
  uint64_t memory_used_ = 0;
  bool proven_ = false;
  bool last_refusal_endpoint_ = false;
  ReassemblerStats stats_;
};

using FragResult = Reassembler::FragResult;

}  // namespace braid::reorder

#endif  // BRAID_REORDER_REASSEMBLER_H_
