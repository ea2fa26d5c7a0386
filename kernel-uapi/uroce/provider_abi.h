/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Our declaration of libibverbs' *private* provider ABI ("PABI").
 *
 * rdma-core does not install the header that defines the structures a
 * provider plugin exchanges with libibverbs, so we declare them here from
 * the ABI facts: field order, types and sizes exactly as libibverbs of a
 * given rdma-core release lays them out.  Every structure below is read or
 * written by libibverbs itself, so a single misplaced field is a memory
 * corruption.  The _Static_asserts at the end pin what we verified against
 * the real libraries (docs/rdma-core-versions.md, tests/releases/).
 *
 * The PABI number alone does not fix the layout (rdma-core grew
 * verbs_context_ops and the public ibv_qp_ex inside PABI 34 and 59), so a
 * build targets one rdma-core *release*: meson passes UROCE_RDMA_CORE, the
 * major version of the installed libibverbs (pkg-config: 1.<n>.<major>.<minor>).
 * Public structures (verbs_context, ibv_qp_ex inside verbs_qp, ibv_port_attr)
 * follow that release's own <infiniband/verbs.h>.
 */
#ifndef UROCE_PROVIDER_ABI_H
#define UROCE_PROVIDER_ABI_H

/*
 * The layouts, one row per range of rdma-core releases that look the same
 * to a provider.  Each row was read from that release's libibverbs/driver.h
 * (struct verbs_context_ops), libibverbs/verbs.h (the public structures a
 * provider embeds or libibverbs fills in) and CMakeLists.txt with
 * libibverbs.map.in (the IBVERBS_PRIVATE_<PABI> symbol version), and every
 * point release of a range agrees with its .0 (docs/rdma-core-versions.md
 * says how that was checked).  A build is for exactly one row; the provider
 * refuses to register under a libibverbs outside its row
 * (providers/uroce/verbs/abi_guard.c).
 *
 * Columns: first and last rdma-core major of the row; PABI, the number in
 * IBVERBS_PRIVATE_<PABI>, verbs_register_driver_<PABI> and -rdmav<PABI>.so;
 * the entries of verbs_context_ops; sizeof ibv_qp_ex, verbs_context and
 * ibv_port_attr.  What changed from the row above, and who ships it:
 *
 *   36-43  Ubuntu 22.04 (39), RHEL 9.0-9.1
 *   44     ibv_qp_ex + wr_atomic_write              Debian 12, RHEL 9.2
 *   45-48  ibv_qp_ex + wr_flush                     RHEL 9.3-9.4, Fedora 40
 *   49-56  ibv_port_attr + active_speed_ex          Ubuntu 24.04 (50), Debian 13 (56.1)
 *   57-58  PABI 57 (ibv_cmd_get_context fd_arr)     Fedora 43, RHEL 10.0-10.1
 *   59-61  PABI 59; 3 ops, verbs_context + 3 ptrs   Ubuntu 26.04, Fedora 44, RHEL 9.8
 *   62-63  PABI still 59; 2 ops, verbs_context + 1  (between distribution releases)
 *   64     PABI 64; 2 ops, verbs_context + 2 ptrs   Ubuntu 26.10, Fedora 45
 *   65     PABI 65; 10 ops (completion counters)    Debian sid/forky (65.0)
 *
 * Releases before 36 (fewer ops) and after 65 (not measured) have no row.
 */
#define PABI_KNOWN_FIRST 36
#define PABI_KNOWN_LAST 65
#define PABI_SUPPORTED "36-65"

#define PABI_IN(first, last) (UROCE_RDMA_CORE >= (first) && UROCE_RDMA_CORE <= (last))
#if !defined(UROCE_RDMA_CORE)
#error "uroce: UROCE_RDMA_CORE (the rdma-core major version) must be defined by the build"
/*                              first last PABI ops qp_ex verbs_context port_attr */
#elif PABI_IN(36, 43)
#define PABI_ROW                  36, 43,  34,  76, 344,  648,          52
#elif PABI_IN(44, 44)
#define PABI_ROW                  44, 44,  34,  76, 352,  648,          52
#elif PABI_IN(45, 48)
#define PABI_ROW                  45, 48,  34,  76, 360,  648,          52
#elif PABI_IN(49, 56)
#define PABI_ROW                  49, 56,  34,  76, 360,  648,          56
#elif PABI_IN(57, 58)
#define PABI_ROW                  57, 58,  57,  76, 360,  648,          56
#elif PABI_IN(59, 61)
#define PABI_ROW                  59, 61,  59,  79, 360,  672,          56
#elif PABI_IN(62, 63)
#define PABI_ROW                  62, 63,  59,  81, 360,  680,          56
#elif PABI_IN(64, 64)
#define PABI_ROW                  64, 64,  64,  83, 360,  696,          56
#elif PABI_IN(65, 65)
#define PABI_ROW                  65, 65,  65,  93, 360,  696,          56
#elif !defined(UROCE_ABI_PROBE)
#error "uroce: this rdma-core release has no layout row here (supported: " PABI_SUPPORTED ")"
#endif

#ifdef PABI_ROW
#define PABI_APPLY(m, ...) m(__VA_ARGS__)
#define PABI_COL_FIRST(f, l, p, o, q, v, s) f
#define PABI_COL_LAST(f, l, p, o, q, v, s) l
#define PABI_COL_VERSION(f, l, p, o, q, v, s) p
#define PABI_COL_OPS(f, l, p, o, q, v, s) o
#define PABI_COL_QP_EX(f, l, p, o, q, v, s) q
#define PABI_COL_VCTX(f, l, p, o, q, v, s) v
#define PABI_COL_PORT(f, l, p, o, q, v, s) s
#define PABI_FIRST PABI_APPLY(PABI_COL_FIRST, PABI_ROW)
#define PABI_LAST PABI_APPLY(PABI_COL_LAST, PABI_ROW)
#define PABI_VERSION PABI_APPLY(PABI_COL_VERSION, PABI_ROW)
#define PABI_OPS PABI_APPLY(PABI_COL_OPS, PABI_ROW)
#define PABI_QP_EX_SIZE PABI_APPLY(PABI_COL_QP_EX, PABI_ROW)
#define PABI_VERBS_CONTEXT_SIZE PABI_APPLY(PABI_COL_VCTX, PABI_ROW)
#define PABI_PORT_ATTR_SIZE PABI_APPLY(PABI_COL_PORT, PABI_ROW)
#endif

/*
 * Ops, ibv_qp_ex members and flags a release added: the text from that
 * release on, nothing before (44: wr_atomic_write; 45: wr_flush and the
 * FLUSH access flags; 59, 62, 64, 65: the ops of the table above).
 */
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 44
#define PABI_SINCE_44(...) __VA_ARGS__
#else
#define PABI_SINCE_44(...)
#endif
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 45
#define PABI_SINCE_45(...) __VA_ARGS__
#else
#define PABI_SINCE_45(...)
#endif
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 59
#define PABI_SINCE_59(...) __VA_ARGS__
#else
#define PABI_SINCE_59(...)
#endif
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 62
#define PABI_SINCE_62(...) __VA_ARGS__
#else
#define PABI_SINCE_62(...)
#endif
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 64
#define PABI_SINCE_64(...) __VA_ARGS__
#else
#define PABI_SINCE_64(...)
#endif
#if defined(PABI_ROW) && UROCE_RDMA_CORE >= 65
#define PABI_SINCE_65(...) __VA_ARGS__
#else
#define PABI_SINCE_65(...)
#endif

#define PABI_STR_(x) #x
#define PABI_STR(x) PABI_STR_(x)

/* meson's probe (UROCE_ABI_PROBE) reads only the table above. */
#if !defined(UROCE_ABI_PROBE)

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <infiniband/verbs.h>

/* ccan's intrusive doubly linked list node, embedded in libibverbs' lists. */
struct pabi_list_node {
	struct pabi_list_node *next;
	struct pabi_list_node *prev;
};

/* How a match table entry is compared against a device. */
enum pabi_match_kind {
	PABI_MATCH_SENTINEL = 0,
	PABI_MATCH_PCI = 1,
	PABI_MATCH_MODALIAS = 2, /* fnmatch() pattern on device/modalias */
	PABI_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; /* enum pabi_match_kind */
};

/* One device libibverbs found (through netlink or the sysfs fallback). */
struct verbs_sysfs_dev {
	struct pabi_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];  /* "uverbsN" */
	dev_t sysfs_cdev;                     /* rdev of /dev/infiniband/uverbsN */
	char ibdev_name[IBV_SYSFS_NAME_MAX];  /* "uroce0" */
	char ibdev_path[IBV_SYSFS_PATH_MAX];  /* $SYSFS_PATH/class/infiniband/uroce0 */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

/* What a provider registers with verbs_register_driver_<PABI>(). */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* The provider allocates this (embedding it first in its own device). */
struct verbs_device {
	struct ibv_device device; /* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct pabi_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* How a memory region was made; libibverbs' ibv_dereg_mr() looks at it. */
enum pabi_mr_type {
	PABI_MR_TYPE_MR,
	PABI_MR_TYPE_NULL_MR,
	PABI_MR_TYPE_IMPORTED_MR,
	PABI_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum pabi_mr_type mr_type;
	int access;
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/*
 * Every operation a provider may supply.  The order is the ABI (libibverbs
 * keeps it alphabetical, inserting new ops in place); verbs_set_ops() copies
 * the non-NULL ones over libibverbs' defaults, which fail with EOPNOTSUPP.
 * An op tagged PABI_SINCE_NN exists from rdma-core NN on (59: DMAH and
 * reg_mr_ex; 62: dm_export_dmabuf_fd, query_port_speed; 64: alloc/free_buf;
 * 65: completion counters).  We leave all of those unset.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd,
			 enum ibv_advise_mr_advice advice,
			 uint32_t flags,
			 struct ibv_sge *sg_list,
			 uint32_t num_sges);
	PABI_SINCE_64(void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
				   struct ibv_buf **buf);)
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	PABI_SINCE_59(struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
					       struct ibv_dmah_init_attr *attr);)
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	PABI_SINCE_65(struct ibv_comp_cntr *(*create_comp_cntr)(struct ibv_context *context,
							  struct ibv_comp_cntr_init_attr *attr);)
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	PABI_SINCE_59(int (*dealloc_dmah)(struct ibv_dmah *dmah);)
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	PABI_SINCE_65(int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);)
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	PABI_SINCE_62(int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);)
	PABI_SINCE_64(void (*free_buf)(struct ibv_buf *buf);)
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd,
				    uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	PABI_SINCE_65(int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);)
	PABI_SINCE_65(int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					 uint64_t amount);)
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(
		struct ibv_context *context,
		struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	PABI_SINCE_65(int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
					   struct ibv_comp_cntr *comp_cntr,
					   struct ibv_qp_attach_comp_cntr_attr *attr);)
	PABI_SINCE_65(int (*query_comp_cntr_caps)(struct ibv_context *context,
					    struct ibv_comp_cntr_caps *caps,
					    size_t caps_size);)
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	PABI_SINCE_62(int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
					uint64_t *speed);)
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	PABI_SINCE_65(int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);)
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value,
			     uint32_t ncounters,
			     uint32_t flags);
	PABI_SINCE_65(int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					  uint64_t *value);)
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova,
					int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	PABI_SINCE_59(struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
					    struct ibv_mr_init_attr *mr_init_attr);)
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	PABI_SINCE_65(int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);)
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	PABI_SINCE_65(int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					 uint64_t value);)
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Functions libibverbs.so.1 exports under the symbol version
 * IBVERBS_PRIVATE_<PABI>; names and signatures are the same in every row.
 */
#define PABI_CAT_(a, b) a##b
#define PABI_CAT(a, b) PABI_CAT_(a, b)
#define pabi_register_driver PABI_CAT(verbs_register_driver_, PABI_VERSION)
void pabi_register_driver(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/*
 * Allocate a provider context of type TYPE whose struct verbs_context
 * member is MEMBER; libibverbs zeroes it and initialises the core part.
 */
#define pabi_alloc_context(ibdev, cmd_fd, TYPE, MEMBER)                       \
	((TYPE *)_verbs_init_and_alloc_context(                                \
		(ibdev), (cmd_fd), sizeof(TYPE),                               \
		&((TYPE *)NULL)->MEMBER, 0 /* RDMA_DRIVER_UNKNOWN */))

/* The verbs ABI version libibverbs requires of the (here: emulated) kernel. */
#define PABI_UVERBS_ABI_VERSION 6

/*
 * Layout facts pinned for x86-64 / aarch64 (LP64): the row's sizes must be
 * those of the <infiniband/verbs.h> we compile against, and our private
 * structures those measured under rdma-core 39.0-65.0 (tests/releases/).
 */
#if defined(__LP64__)
_Static_assert(sizeof(struct verbs_context_ops) == PABI_OPS * sizeof(void *),
	       "verbs_context_ops must hold exactly this release's operations");
_Static_assert(sizeof(struct ibv_qp_ex) == PABI_QP_EX_SIZE,
	       "ibv_qp_ex of <infiniband/verbs.h> is not this row's (wrong rdma-core headers?)");
_Static_assert(sizeof(struct verbs_context) == PABI_VERBS_CONTEXT_SIZE,
	       "verbs_context of <infiniband/verbs.h> is not this row's");
/* libibverbs hands out &vctx->context; our container_of goes back by this. */
_Static_assert(offsetof(struct verbs_context, context) ==
		       PABI_VERBS_CONTEXT_SIZE - sizeof(struct ibv_context), "verbs_context.context");
_Static_assert(sizeof(struct ibv_port_attr) == PABI_PORT_ATTR_SIZE,
	       "ibv_port_attr of <infiniband/verbs.h> is not this row's");
/* libibverbs' ibv_qp_to_qp_ex() reads comp_mask right after ibv_qp_ex. */
_Static_assert(offsetof(struct verbs_qp, comp_mask) == PABI_QP_EX_SIZE, "verbs_qp.comp_mask");
_Static_assert(sizeof(struct verbs_qp) == PABI_QP_EX_SIZE + 16, "verbs_qp size");
_Static_assert(offsetof(struct verbs_context_ops, free_context) ==
		       (39 PABI_SINCE_59(+ 2) PABI_SINCE_62(+ 1) PABI_SINCE_64(+ 2)
			PABI_SINCE_65(+ 2)) * 8, "free_context");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) ==
		       (53 PABI_SINCE_59(+ 2) PABI_SINCE_62(+ 1) PABI_SINCE_64(+ 2)
			PABI_SINCE_65(+ 4)) * 8, "poll_cq");
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36, "sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "ibdev_path");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944, "node_guid");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(offsetof(struct verbs_device, ops) == sizeof(struct ibv_device), "verbs_device.ops");
_Static_assert(sizeof(struct verbs_device) == sizeof(struct ibv_device) + 48, "verbs_device");
_Static_assert(offsetof(struct verbs_mr, mr_type) == sizeof(struct ibv_mr), "verbs_mr");
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex layout");
_Static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr size");
_Static_assert(sizeof(struct verbs_srq) == 160, "verbs_srq size");
#endif

#endif /* !UROCE_ABI_PROBE */
#endif /* UROCE_PROVIDER_ABI_H */
