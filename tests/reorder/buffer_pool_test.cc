#include "reorder/buffer_pool.h"

#include <utility>

#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

TEST(BufferPoolTest, ReturnedBufferIsReusedForTheSameSizeClass) {
  BufferPool pool;
  std::vector<uint8_t> a = pool.Get(3000);
  EXPECT_EQ(a.size(), 3000u);
  EXPECT_EQ(a.capacity(), 4096u);
  const uint8_t* p = a.data();
  pool.Put(std::move(a));
  EXPECT_EQ(pool.pooled_buffers(), 1u);
  std::vector<uint8_t> b = pool.Get(2100);  // same class (4096)
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 2100u);
  EXPECT_EQ(pool.stats().hits, 1u);
  EXPECT_EQ(pool.stats().allocations, 1u);
}

TEST(BufferPoolTest, SteadyStateDoesNotAllocate) {
  BufferPool pool;
  for (int i = 0; i < 1000; ++i) {
    std::vector<uint8_t> v = pool.Get(1000 + i % 24);
    pool.Put(std::move(v));
  }
  EXPECT_EQ(pool.stats().allocations, 1u);
}

TEST(BufferPoolTest, SmallerClassIsNotServedFromLargerRequest) {
  BufferPool pool;
  pool.Put(pool.Get(100));                 // class 128
  std::vector<uint8_t> v = pool.Get(200);  // class 256: new
  EXPECT_EQ(v.size(), 200u);
  EXPECT_GE(v.capacity(), 256u);
  EXPECT_EQ(pool.stats().allocations, 2u);
}

// Large messages in steady state (a 4 MiB ping-pong) reuse their buffer
// instead of allocating, zero-filling and page-faulting 4 MiB per message.
TEST(BufferPoolTest, DefaultsReuseMultiMebibyteBuffers) {
  BufferPool pool;
  for (int i = 0; i < 10; ++i) pool.Put(pool.Get(4 << 20));
  EXPECT_EQ(pool.stats().allocations, 1u);
  EXPECT_EQ(pool.stats().hits, 9u);
  // Beyond the class bound: freed on Put.
  pool.Put(pool.Get(32 << 20));
  EXPECT_EQ(pool.stats().freed, 1u);
}

TEST(BufferPoolTest, ReserveWritesNothing) {
  BufferPool pool;
  std::vector<uint8_t> a = pool.Reserve(3000);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_GE(a.capacity(), 3000u);
  a.assign(2500, 0x77);
  const uint8_t* p = a.data();
  pool.Put(std::move(a));
  // Reused as it was: same storage, old size and bytes (the caller
  // overwrites or appends).
  std::vector<uint8_t> b = pool.Reserve(4000);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 2500u);
  EXPECT_EQ(b[0], 0x77);
  EXPECT_EQ(pool.stats().hits, 1u);
  EXPECT_EQ(pool.stats().allocations, 1u);
  EXPECT_TRUE(pool.Reserve(0).empty());
  // Beyond the pooled sizes: still reserved, not filled.
  std::vector<uint8_t> c = pool.Reserve(64 << 20);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_GE(c.capacity(), size_t{64} << 20);
}

TEST(BufferPoolTest, ZeroSizeNeverAllocates) {
  BufferPool pool;
  std::vector<uint8_t> v = pool.Get(0);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(pool.stats().allocations, 0u);
}

TEST(BufferPoolTest, PoolIsBoundedPerClassAndBySize) {
  BufferPoolOptions o;
  o.max_buffers_per_class = 2;
  o.max_pooled_size = 4096;
  BufferPool pool(o);
  for (int i = 0; i < 3; ++i) pool.Put(std::vector<uint8_t>(1024));
  EXPECT_EQ(pool.pooled_buffers(), 2u);
  pool.Put(std::vector<uint8_t>(8192));  // too large to keep
  EXPECT_EQ(pool.pooled_buffers(), 2u);
  EXPECT_EQ(pool.stats().freed, 2u);
  EXPECT_EQ(pool.pooled_bytes(), 2048u);
  pool.Clear();
  EXPECT_EQ(pool.pooled_buffers(), 0u);
  EXPECT_EQ(pool.pooled_bytes(), 0u);
}

TEST(BufferPoolTest, TotalPooledBytesAreBounded) {
  BufferPoolOptions o;
  o.max_pooled_bytes = 3000;
  BufferPool pool(o);
  pool.Put(std::vector<uint8_t>(1024));
  pool.Put(std::vector<uint8_t>(1024));
  pool.Put(std::vector<uint8_t>(1024));
  EXPECT_EQ(pool.pooled_buffers(), 2u);
}

// The defaults keep a receiver's whole backlog of small messages: a reader
// that fell behind holds thousands at once and hands them back together;
// the next surge of the same size must allocate nothing. Any one class
// stays bounded.
TEST(BufferPoolTest, DefaultsKeepASurgeOfSmallBuffersButStayBounded) {
  BufferPool pool;
  std::vector<std::vector<uint8_t>> held;
  for (int i = 0; i < 5000; ++i) held.push_back(pool.Get(64));
  for (auto& b : held) pool.Put(std::move(b));
  held.clear();
  const uint64_t allocs = pool.stats().allocations;
  for (int i = 0; i < 5000; ++i) held.push_back(pool.Get(64));
  EXPECT_EQ(pool.stats().allocations, allocs);
  for (int i = 0; i < 20000; ++i) pool.Put(std::vector<uint8_t>(64));
  EXPECT_EQ(pool.pooled_buffers(), BufferPoolOptions().max_buffers_per_class);
}

}  // namespace
}  // namespace braid::reorder
