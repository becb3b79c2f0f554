// The libibverbs calls the verbs UD backend makes, as a table of function
// pointers: by default libibverbs' own (whatever provider serves the device:
// a NIC's, or braid0 when libbraid-verbs.so is loaded first), and in unit
// tests a table that fails chosen calls, so every error a device can give is
// exercised without one.
#ifndef BRAID_BACKEND_VERBS_UD_UD_VERBS_OPS_H_
#define BRAID_BACKEND_VERBS_UD_UD_VERBS_OPS_H_

#include <infiniband/verbs.h>

namespace braid::backend {

struct UdVerbsOps {
  ibv_device** (*get_device_list)(int* num);
  void (*free_device_list)(ibv_device** list);
  const char* (*get_device_name)(ibv_device* dev);
  ibv_context* (*open_device)(ibv_device* dev);
  int (*close_device)(ibv_context* ctx);
  int (*query_port)(ibv_context* ctx, uint8_t port, ibv_port_attr* attr);
  int (*query_gid)(ibv_context* ctx, uint8_t port, int index, ibv_gid* gid);
  ibv_pd* (*alloc_pd)(ibv_context* ctx);
  int (*dealloc_pd)(ibv_pd* pd);
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, size_t len, int access);
  int (*dereg_mr)(ibv_mr* mr);
  ibv_cq* (*create_cq)(ibv_context* ctx, int cqe, void* cq_context,
                       ibv_comp_channel* channel, int comp_vector);
  int (*destroy_cq)(ibv_cq* cq);
  ibv_cq_ex* (*create_cq_ex)(ibv_context* ctx, ibv_cq_init_attr_ex* attr);
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroy_qp)(ibv_qp* qp);
  ibv_ah* (*create_ah)(ibv_pd* pd, ibv_ah_attr* attr);
  int (*destroy_ah)(ibv_ah* ah);
  int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int (*poll_cq)(ibv_cq* cq, int n, ibv_wc* wc);
  int (*get_async_event)(ibv_context* ctx, ibv_async_event* event);
  void (*ack_async_event)(ibv_async_event* event);
};

// libibverbs' own entry points (ibv_post_send and friends are inline
// functions in verbs.h; the table holds wrappers that call them).
const UdVerbsOps& DefaultUdVerbsOps();

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_VERBS_OPS_H_
