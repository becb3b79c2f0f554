// A libfabric client of the braid provider for tests: opens the provider
// through fi_getinfo (FI_PROVIDER_PATH names the build's provider
// directory), one domain, and endpoints ("sides") that each have one CQ
// for both directions and an AV holding every other side.
#ifndef BRAID_TESTS_LIBFABRIC_FI_FIXTURE_H_
#define BRAID_TESTS_LIBFABRIC_FI_FIXTURE_H_

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::libfabric::testing {

struct Side {
  fid_ep* ep = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  std::string name;              // fi_getname bytes
  std::vector<fi_addr_t> peers;  // fi_addr of side i in this side's AV
  std::deque<fi_cq_tagged_entry> got;
  std::deque<fi_addr_t> got_from;
  std::deque<fi_cq_err_entry> errs;
  std::deque<std::string> err_texts;
};

struct SideOptions {
  bool selective_tx = false;  // bind the tx CQ with FI_SELECTIVE_COMPLETION
  bool wait_fd = false;       // a CQ with FI_WAIT_FD
  bool rma = false;  // ask for FI_RMA (mr_mode FI_MR_PROV_KEY | _VIRT_ADDR)
};

class FiTest : public ::testing::Test {
 protected:
  // Opens the fabric and domain; n sides, all knowing each other.
  void Open(int n, SideOptions opts = {});
  void TearDown() override;

  // Reads whatever `s`'s CQ has (driving its endpoint) into s.got / s.errs.
  void Pump(Side& s);
  // Pumps every side until `done` or 10 s; returns done().
  bool PumpUntil(const std::function<bool()>& done);

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  std::vector<Side> sides_;
};

}  // namespace braid::libfabric::testing

#endif  // BRAID_TESTS_LIBFABRIC_FI_FIXTURE_H_
