#include "libfabric/info.h"

#include <netinet/in.h>
#include <rdma/fi_errno.h>

#include "gtest/gtest.h"
#include "libfabric/sockaddr.h"

namespace braid::libfabric {
namespace {

constexpr uint32_t kVersion = FI_VERSION(1, 17);

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

InfoPtr Hints() { return InfoPtr(fi_allocinfo()); }

int Get(const fi_info* hints, InfoPtr* out, const char* node = nullptr,
        const char* service = nullptr, uint64_t flags = 0,
        const ProviderConfig& config = ProviderConfig()) {
  fi_info* info = nullptr;
  int r = GetInfo(kVersion, node, service, flags, hints, config, &info);
  out->reset(info);
  return r;
}

TEST(InfoTest, WithoutHintsOffersAnRdmEndpointWithMsgAndTagged) {
  InfoPtr info;
  ASSERT_EQ(Get(nullptr, &info), 0);
  EXPECT_EQ(info->ep_attr->type, FI_EP_RDM);
  EXPECT_EQ(info->caps & (FI_MSG | FI_TAGGED | FI_DIRECTED_RECV),
            FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
  EXPECT_EQ(info->caps & kRmaCaps, kRmaCaps);  // RMA and atomics
  EXPECT_EQ(info->domain_attr->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  EXPECT_EQ(info->domain_attr->mr_key_size, 8u);
  EXPECT_EQ(info->tx_attr->rma_iov_limit, 1u);
  EXPECT_EQ(info->tx_attr->msg_order, FI_ORDER_SAS);
  EXPECT_EQ(info->domain_attr->cq_data_size, 8u);
  EXPECT_EQ(info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
  EXPECT_EQ(info->addr_format, static_cast<uint32_t>(FI_SOCKADDR_IN));
  EXPECT_EQ(info->next, nullptr);
  NetAddr src;
  ASSERT_TRUE(FromSockaddr(info->src_addr, info->src_addrlen, &src));
  EXPECT_EQ(src.ToString(), "127.0.0.1:0");
}

TEST(InfoTest, AtomicsSwitchedOffAreNotOffered) {
  ProviderConfig off;
  off.atomics = false;
  InfoPtr h = Hints(), info;
  h->caps = FI_MSG | FI_ATOMIC;
  h->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  EXPECT_EQ(Get(h.get(), &info, nullptr, nullptr, 0, off), -FI_ENODATA);
  h->caps = 0;
  ASSERT_EQ(Get(h.get(), &info, nullptr, nullptr, 0, off), 0);
  EXPECT_EQ(info->caps & FI_ATOMIC, 0u);
  EXPECT_TRUE(info->caps & FI_RMA);
}

TEST(InfoTest, AtomicsNeedTheRmaMrModeToo) {
  InfoPtr h = Hints(), info;
  h->caps = FI_MSG | FI_ATOMIC;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);  // mr_mode 0
  h->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_TRUE(info->caps & FI_ATOMIC);
  EXPECT_TRUE(info->tx_attr->caps & FI_ATOMIC);
}

TEST(InfoTest,
     RmaIsOfferedWhenTheMrModeAcceptsProviderKeysAndVirtualAddresses) {
  InfoPtr h = Hints(), info;
  h->caps = FI_MSG | FI_RMA;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                            FI_MR_VIRT_ADDR;  // what fabtests ask with
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_TRUE(info->caps & FI_RMA);
  EXPECT_EQ(info->domain_attr->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  EXPECT_TRUE(info->tx_attr->caps & FI_RMA);
  EXPECT_TRUE(info->rx_attr->caps & FI_RMA);
}

TEST(InfoTest, RmaHintsWithoutProviderKeysOrVirtualAddressesGetNoData) {
  InfoPtr h = Hints(), info;
  h->caps = FI_RMA;
  h->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
  h->domain_attr->mr_mode = FI_MR_SCALABLE;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
  h->domain_attr->mr_mode = FI_MR_BASIC;
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_EQ(info->domain_attr->mr_mode, FI_MR_BASIC);
}

TEST(InfoTest, WithoutCapsAndWithoutRmaMrModeRmaIsLeftOutNotRefused) {
  InfoPtr h = Hints(), info;
  h->domain_attr->mr_mode = 0;
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_EQ(info->caps & kRmaCaps, 0u);
  EXPECT_EQ(info->domain_attr->mr_mode, 0);
  EXPECT_TRUE(info->caps & FI_TAGGED);
}

TEST(InfoTest, MessagingHintsGetNoRmaAndNoMrModeRequirement) {
  InfoPtr h = Hints(), info;
  h->caps = FI_TAGGED;  // Open MPI's ofi MTL
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_EQ(info->caps & kRmaCaps, 0u);
  EXPECT_EQ(info->domain_attr->mr_mode, 0);
}

TEST(InfoTest, HintsAskingForAnotherEndpointTypeGetNoData) {
  InfoPtr h = Hints(), info;
  h->ep_attr->type = FI_EP_MSG;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
  h->ep_attr->type = FI_EP_DGRAM;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
}

TEST(InfoTest, HintsAskingForAutomaticDataProgressGetNoData) {
  InfoPtr h = Hints(), info;
  h->domain_attr->data_progress = FI_PROGRESS_AUTO;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
}

TEST(InfoTest, HintsAskingForStrongerOrderingGetNoData) {
  InfoPtr h = Hints(), info;
  h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW;
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
}

TEST(InfoTest, RequestedCapsAreReturnedWithoutExtraPrimaryCaps) {
  InfoPtr h = Hints(), info;
  h->caps = FI_TAGGED;
  h->domain_attr->av_type = FI_AV_MAP;
  ASSERT_EQ(Get(h.get(), &info), 0);
  EXPECT_TRUE(info->caps & FI_TAGGED);
  EXPECT_FALSE(info->caps & FI_MSG);
  EXPECT_FALSE(info->caps & FI_DIRECTED_RECV);
  EXPECT_EQ(info->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
  EXPECT_EQ(info->domain_attr->av_type, FI_AV_MAP);
}

TEST(InfoTest, NodeWithFiSourceSetsTheLocalAddress) {
  InfoPtr info;
  ASSERT_EQ(Get(nullptr, &info, "127.0.0.2", "4242", FI_SOURCE), 0);
  NetAddr src;
  ASSERT_TRUE(FromSockaddr(info->src_addr, info->src_addrlen, &src));
  EXPECT_EQ(src.ToString(), "127.0.0.2:4242");
  EXPECT_EQ(info->dest_addr, nullptr);
}

TEST(InfoTest, NodeWithoutFiSourceSetsTheDestination) {
  InfoPtr info;
  ASSERT_EQ(Get(nullptr, &info, "127.0.0.3", "5000"), 0);
  NetAddr dest;
  ASSERT_TRUE(FromSockaddr(info->dest_addr, info->dest_addrlen, &dest));
  EXPECT_EQ(dest.ToString(), "127.0.0.3:5000");
}

TEST(InfoTest, OtherProviderNamesInHintsGetNoData) {
  InfoPtr h = Hints(), info;
  h->domain_attr->name = strdup("mlx5_0");
  EXPECT_EQ(Get(h.get(), &info), -FI_ENODATA);
}

TEST(SockaddrTest, Ipv4RoundTripsAndMappedIpv6BecomesIpv4) {
  NetAddr a = NetAddr::Parse("10.1.2.3:7000").value();
  sockaddr_storage ss;
  size_t n = ToSockaddr(a, &ss);
  EXPECT_EQ(n, sizeof(sockaddr_in));
  NetAddr b;
  ASSERT_TRUE(FromSockaddr(&ss, n, &b));
  EXPECT_EQ(a, b);
  NetAddr mapped = NetAddr::Parse("[::ffff:10.1.2.3]:7000").value();
  n = ToSockaddr(mapped, &ss);
  ASSERT_TRUE(FromSockaddr(&ss, n, &b));
  EXPECT_EQ(b, a);
  EXPECT_FALSE(FromSockaddr(&ss, 4, &b));
}

}  // namespace
}  // namespace braid::libfabric
