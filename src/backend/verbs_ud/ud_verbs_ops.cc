#include "backend/verbs_ud/ud_verbs_ops.h"

namespace braid::backend {
namespace {

// The inline entry points of verbs.h, as functions with an address.
int PostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  return ibv_post_send(qp, wr, bad);
}
int PostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return ibv_post_recv(qp, wr, bad);
}
int PollCq(ibv_cq* cq, int n, ibv_wc* wc) { return ibv_poll_cq(cq, n, wc); }
ibv_mr* RegMr(ibv_pd* pd, void* addr, size_t len, int access) {
  return ibv_reg_mr(pd, addr, len, access);
}
ibv_cq_ex* CreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr) {
  return ibv_create_cq_ex(ctx, attr);
}
int QueryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  return ibv_query_port(ctx, port, attr);
}

}  // namespace

const UdVerbsOps& DefaultUdVerbsOps() {
  static const UdVerbsOps ops = {
      .get_device_list = ibv_get_device_list,
      .free_device_list = ibv_free_device_list,
      .get_device_name = ibv_get_device_name,
      .open_device = ibv_open_device,
      .close_device = ibv_close_device,
      .query_port = QueryPort,
      .query_gid = ibv_query_gid,
      .alloc_pd = ibv_alloc_pd,
      .dealloc_pd = ibv_dealloc_pd,
      .reg_mr = RegMr,
      .dereg_mr = ibv_dereg_mr,
      .create_cq = ibv_create_cq,
      .destroy_cq = ibv_destroy_cq,
      .create_cq_ex = CreateCqEx,
      .create_qp = ibv_create_qp,
      .modify_qp = ibv_modify_qp,
      .destroy_qp = ibv_destroy_qp,
      .create_ah = ibv_create_ah,
      .destroy_ah = ibv_destroy_ah,
      .post_send = PostSend,
      .post_recv = PostRecv,
      .poll_cq = PollCq,
      .get_async_event = ibv_get_async_event,
      .ack_async_event = ibv_ack_async_event,
  };
  return ops;
}

}  // namespace braid::backend
