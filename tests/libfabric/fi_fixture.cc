#include "tests/libfabric/fi_fixture.h"

#include <cstdlib>
#include <cstring>
#include <thread>

namespace braid::libfabric::testing {
namespace {

// The provider directory and a short peer timeout, before libfabric
// initialises (it reads both once).
struct Env {
  Env() {
    setenv("FI_PROVIDER_PATH", BRAID_FI_PROVIDER_DIR, 0);
    setenv("FI_BRAID_PEER_TIMEOUT_MS", "300", 0);
    // Small, so that a test can fill it: past it an endpoint leaves
    // messages in braid and its senders wait.
    setenv("FI_BRAID_UNEXPECTED_MB", "1", 0);
  }
} env;

}  // namespace

void FiTest::Open(int n, SideOptions opts) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("braid");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE;
  hints->domain_attr->av_type = FI_AV_TABLE;
  if (opts.rma) {
    hints->caps |= FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  }
  int r = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_);
  fi_freeinfo(hints);
  ASSERT_EQ(r, 0) << "fi_getinfo: " << fi_strerror(-r)
                  << " (FI_PROVIDER_PATH=" << getenv("FI_PROVIDER_PATH") << ")";
  ASSERT_STREQ(info_->fabric_attr->prov_name, "braid");
  ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
  ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
  sides_.resize(n);
  for (Side& s : sides_) {
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = opts.wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
    ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &s.av, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain_, info_, &s.ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(s.ep, &s.av->fid, 0), 0);
    uint64_t tx = FI_TRANSMIT;
    if (opts.selective_tx) tx |= FI_SELECTIVE_COMPLETION;
    ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, tx), 0);
    ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_RECV), 0);
    ASSERT_EQ(fi_enable(s.ep), 0);
    char name[64];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&s.ep->fid, name, &len), 0);
    s.name.assign(name, len);
  }
  for (Side& s : sides_) {
    for (Side& other : sides_) {
      fi_addr_t a = FI_ADDR_NOTAVAIL;
      ASSERT_EQ(fi_av_insert(s.av, other.name.data(), 1, &a, 0, nullptr), 1);
      s.peers.push_back(a);
    }
  }
}

void FiTest::TearDown() {
  for (Side& s : sides_) {
    if (s.ep) {
      EXPECT_EQ(fi_close(&s.ep->fid), 0);
    }
    if (s.cq) {
      EXPECT_EQ(fi_close(&s.cq->fid), 0);
    }
    if (s.av) {
      EXPECT_EQ(fi_close(&s.av->fid), 0);
    }
  }
  if (domain_) {
    EXPECT_EQ(fi_close(&domain_->fid), 0);
  }
  if (fabric_) {
    EXPECT_EQ(fi_close(&fabric_->fid), 0);
  }
  if (info_) fi_freeinfo(info_);
}

void FiTest::Pump(Side& s) {
  for (;;) {
    fi_cq_tagged_entry e[8];
    fi_addr_t from[8];
    ssize_t n = fi_cq_readfrom(s.cq, e, 8, from);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        s.got.push_back(e[i]);
        s.got_from.push_back(from[i]);
      }
      continue;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      ASSERT_EQ(fi_cq_readerr(s.cq, &err, 0), 1);
      s.err_texts.push_back(
          fi_cq_strerror(s.cq, err.prov_errno, err.err_data, nullptr, 0));
      s.errs.push_back(err);
      continue;
    }
    ASSERT_EQ(n, -FI_EAGAIN);
    return;
  }
}

bool FiTest::PumpUntil(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    for (Side& s : sides_) Pump(s);
    std::this_thread::yield();
  }
  return true;
}

}  // namespace braid::libfabric::testing
