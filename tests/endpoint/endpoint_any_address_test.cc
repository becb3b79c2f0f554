// An endpoint bound to the any-address (0.0.0.0, [::]) answers each peer
// from the address that peer sent to: loopback has a whole /8, so clients
// can reach one server at 127.0.0.2 and 127.0.0.3 while the route would
// answer from 127.0.0.1. Before, the clients took the answers for a
// stranger's, dropped them, and their sends failed after the peer timeout.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"

namespace braid {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13);
  return v;
}

NetAddr At(const std::string& ip, uint16_t port) {
  auto a = NetAddr::Parse(ip + ":" + std::to_string(port));
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : NetAddr{};
}

struct Client {
  std::unique_ptr<Endpoint> ep;
  NetAddr server;  // the server as this client knows it
  std::vector<Completion> done;
};

// Each client sends a 100 KiB message to the server at its own address of
// the server; the server answers each with a message of its own. Every
// send must complete as kSendDone and every answer must come from the
// address the client sent to.
void ExchangeThroughTwoAddresses(const std::string& server_bind) {
  EndpointOptions so;
  so.bind = server_bind;
  so.protocol.peer_timeout = DurationNs::Millis(1500);
  auto server_or = Endpoint::Open(so);
  if (!server_or.ok()) {
    GTEST_SKIP() << "cannot bind " << server_bind << ": " << server_or.status();
  }
  std::unique_ptr<Endpoint> server = std::move(*server_or);
  const uint16_t port = server->local_address().port;
  std::vector<Client> clients(2);
  const char* server_ips[] = {"127.0.0.2", "127.0.0.3"};
  EndpointOptions co;
  co.protocol.peer_timeout = DurationNs::Millis(1500);
  for (size_t i = 0; i < clients.size(); ++i) {
    clients[i].ep = testing::OpenOrDie(co);
    ASSERT_NE(clients[i].ep, nullptr);
    clients[i].server = At(server_ips[i], port);
    ASSERT_TRUE(
        clients[i]
            .ep
            ->Send(clients[i].server, Pattern(100000, static_cast<uint32_t>(i)))
            .ok());
  }
  std::vector<Completion> sdone;
  size_t answered = 0;
  auto finished = [&] {
    for (const Client& c : clients) {
      if (c.done.size() < 2) return false;  // its send done + the answer
    }
    return sdone.size() >= 2 * clients.size();
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!finished() && std::chrono::steady_clock::now() < deadline) {
    const size_t before = sdone.size();
    server->Poll(&sdone);
    for (size_t k = before; k < sdone.size(); ++k) {
      if (sdone[k].type != CompletionType::kRecv) continue;
      // Answer whoever sent this, at the address it came from.
      ASSERT_TRUE(
          server->Send(sdone[k].peer, Pattern(50000, 100 + answered)).ok());
      ++answered;
    }
    for (Client& c : clients) c.ep->Poll(&c.done);
  }
  EXPECT_EQ(answered, clients.size());
  for (size_t i = 0; i < clients.size(); ++i) {
    const Client& c = clients[i];
    size_t sent = 0, got = 0;
    for (const Completion& d : c.done) {
      if (d.type == CompletionType::kSendDone) {
        ++sent;
      } else if (d.type == CompletionType::kRecv) {
        ++got;
        EXPECT_EQ(d.peer, c.server) << "answer came from another address";
        EXPECT_EQ(d.data.size(), 50000u);
      } else {
        ADD_FAILURE() << "client " << i << ": completion type "
                      << static_cast<int>(d.type);
      }
    }
    EXPECT_EQ(sent, 1u) << "client " << i << " (server at "
                        << c.server.ToString() << ")";
    EXPECT_EQ(got, 1u) << "client " << i;
    // Nothing the server sent was taken for a stranger's.
    EXPECT_EQ(c.ep->stats().drops.stale_incarnation, 0u) << "client " << i;
  }
  for (const Completion& d : sdone) {
    if (d.type == CompletionType::kRecv) {
      EXPECT_EQ(d.data.size(), 100000u);
    } else {
      EXPECT_EQ(d.type, CompletionType::kSendDone);
    }
  }
}

TEST(EndpointAnyAddressTest, Ipv4AnswersLeaveFromTheAddressEachPeerUsed) {
  ExchangeThroughTwoAddresses("0.0.0.0:0");
}

// A dual-stack socket ([::] with IPV6_V6ONLY off) reached over IPv4.
TEST(EndpointAnyAddressTest, DualStackAnswersLeaveFromTheAddressEachPeerUsed) {
  ExchangeThroughTwoAddresses("[::]:0");
}

}  // namespace
}  // namespace braid
