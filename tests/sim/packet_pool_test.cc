#include "sim/packet_pool.h"

#include <cstring>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace braid::sim {
namespace {

TEST(PacketPoolTest, AllocReturnsResetPacketWithFullCapacity) {
  PacketPool pool(PacketPoolOptions{.buffer_bytes = 2048, .chunk_packets = 4});
  Packet* p = pool.Alloc();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->capacity, 2048u);
  EXPECT_EQ(p->len, 0u);
  p->len = 10;
  p->ce = true;
  p->id = 99;
  pool.Free(p);
  Packet* q = pool.Alloc();
  EXPECT_EQ(q, p);  // LIFO reuse
  EXPECT_EQ(q->len, 0u);
  EXPECT_FALSE(q->ce);
  EXPECT_EQ(q->id, 0u);
  EXPECT_EQ(q->capacity, 2048u);
  pool.Free(q);
}

TEST(PacketPoolTest, SteadyStateDoesNotGrow) {
  PacketPool pool(PacketPoolOptions{.buffer_bytes = 256, .chunk_packets = 8});
  std::vector<Packet*> held;
  for (int i = 0; i < 20; ++i) held.push_back(pool.Alloc());
  const size_t footprint = pool.allocated();
  EXPECT_GE(footprint, 20u);
  for (int round = 0; round < 100; ++round) {
    for (Packet* p : held) pool.Free(p);
    held.clear();
    for (int i = 0; i < 20; ++i) held.push_back(pool.Alloc());
  }
  EXPECT_EQ(pool.allocated(), footprint);
  EXPECT_EQ(pool.in_use(), 20u);
  for (Packet* p : held) pool.Free(p);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(PacketPoolTest, BuffersDoNotOverlap) {
  PacketPool pool(PacketPoolOptions{.buffer_bytes = 100, .chunk_packets = 3});
  std::vector<Packet*> held;
  for (int i = 0; i < 10; ++i) {
    Packet* p = pool.Alloc();
    std::memset(p->data, i, p->capacity);
    held.push_back(p);
  }
  for (int i = 0; i < 10; ++i) {
    for (uint32_t b = 0; b < 100; ++b) ASSERT_EQ(held[i]->data[b], i);
  }
  for (Packet* p : held) pool.Free(p);
}

TEST(PacketPoolTest, PoisonOnFreeOverwritesTheOldPayload) {
  PacketPool pool(PacketPoolOptions{
      .buffer_bytes = 64, .chunk_packets = 1, .poison_on_free = true});
  Packet* p = pool.Alloc();
  std::memset(p->data, 0x11, 64);
  pool.Free(p);
  Packet* q = pool.Alloc();  // same packet back (LIFO)
  ASSERT_EQ(q, p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(q->data[i], 0xdd);
  pool.Free(q);
}

TEST(PacketPoolTest, CloneCopiesHeaderAndPayloadIntoItsOwnBuffer) {
  PacketPool pool;
  Packet* p = pool.Alloc();
  p->id = 7;
  p->src = NetAddr::Ipv4(0x0a000001, 49152);
  p->dst = NetAddr::Ipv4(0x0a010001, 7000);
  p->ect = true;
  p->len = 5;
  std::memcpy(p->data, "hello", 5);
  StampChecksum(*p);
  Packet* c = pool.Clone(*p);
  EXPECT_NE(c->data, p->data);
  EXPECT_EQ(c->id, 7u);
  EXPECT_EQ(c->src, p->src);
  EXPECT_EQ(c->dst, p->dst);
  EXPECT_TRUE(c->ect);
  EXPECT_EQ(c->checksum, p->checksum);
  ASSERT_EQ(c->len, 5u);
  EXPECT_EQ(std::memcmp(c->data, "hello", 5), 0);
  EXPECT_EQ(pool.in_use(), 2u);
  pool.Free(p);
  pool.Free(c);
}

}  // namespace
}  // namespace braid::sim
