// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit test of the registry writer: records, tree layout, GID slot rules. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "device/registry.h"

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); putchar('\n'); } } while (0)

static char root[] = "/tmp/uroce-unit.XXXXXX";

static void read_rel(const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (uroce_read_file(path, buf, len) < 0)
		snprintf(buf, len, "<missing>");
}

static void set_v4(struct uroce_netdev *nd, int i, const char *a)
{
	memset(nd->addrs[i], 0, 16);
	nd->addrs[i][10] = nd->addrs[i][11] = 0xff;
	inet_pton(AF_INET, a, nd->addrs[i] + 12);
}

int main(void)
{
	char buf[PATH_MAX + 64], ibdev[PATH_MAX + 32];
	struct uroce_dev_rec rec = { "dev0", "lo", UROCE_TRANSPORT_UDP, 7 }, got, *all;
	struct uroce_netdev nd = { .name = "eth9", .mtu = 1500, .admin_up = 1, .carrier = 1 };
	int n;

	if (!mkdtemp(root))
		return 1;

	/* names */
	CHECK(uroce_name_valid("uroce0") && uroce_name_valid("a.b-c_d"), "valid names");
	CHECK(!uroce_name_valid("") && !uroce_name_valid("a/b") && !uroce_name_valid("..") &&
	      !uroce_name_valid("a b"), "invalid names");

	/* records round-trip */
	CHECK(uroce_reg_save(root, &rec) == 0, "save");
	CHECK(uroce_reg_find(root, "dev0", &got) == 0 && !strcmp(got.netdev, "lo") &&
	      got.uverbs == 7 && got.transport == UROCE_TRANSPORT_UDP, "find");
	CHECK(uroce_reg_find(root, "nope", &got) == -ENOENT, "find missing");
	rec.default_roce_tos = 0x6a;
	CHECK(uroce_reg_save(root, &rec) == 0 && uroce_reg_find(root, "dev0", &got) == 0 &&
	      got.default_roce_tos == 0x6a, "default_roce_tos round-trips: %u", got.default_roce_tos);
	rec.default_roce_tos = 0;
	CHECK(uroce_reg_load_all(root, &all, &n) == 0 && n == 1, "load_all");
	free(all);

	/* tree: the files libibverbs reads, in the formats it parses */
	char sys[PATH_MAX - 64];
	snprintf(sys, sizeof(sys), "%s/sys", root);
	CHECK(uroce_tree_sync(sys, &rec, 1) == 0, "sync");
	read_rel("sys/class/infiniband_verbs/abi_version", buf, sizeof(buf));
	CHECK(!strcmp(buf, "6"), "abi_version %s", buf);
	read_rel("sys/class/infiniband_verbs/uverbs7/ibdev", buf, sizeof(buf));
	CHECK(!strcmp(buf, "dev0"), "ibdev %s", buf);
	read_rel("sys/class/infiniband_verbs/uverbs7/dev", buf, sizeof(buf));
	CHECK(!strcmp(buf, "1:3"), "dev %s", buf);
	read_rel("sys/class/infiniband/dev0/node_type", buf, sizeof(buf));
	CHECK(!strcmp(buf, "1: CA"), "node_type %s", buf);
	read_rel("sys/class/infiniband/dev0/device/modalias", buf, sizeof(buf));
	CHECK(!strcmp(buf, "uroce:dev0"), "modalias %s", buf);
	read_rel("sys/class/infiniband/dev0/ports/1/gid_attrs/types/31", buf, sizeof(buf));
	CHECK(!strcmp(buf, "RoCE v2"), "type %s", buf);
	read_rel("sys/class/infiniband/dev0/ports/1/pkeys/0", buf, sizeof(buf));
	CHECK(!strcmp(buf, "0xffff"), "pkey %s", buf);

	/* GID slots: existing addresses keep their index, new ones fill holes */
	snprintf(ibdev, sizeof(ibdev), "%s/class/infiniband/dev0", sys);
	set_v4(&nd, 0, "10.0.0.1");
	set_v4(&nd, 1, "10.0.0.2");
	nd.n_addrs = 2;
	CHECK(uroce_tree_refresh_port(ibdev, &nd) == 0, "refresh 1");
	read_rel("sys/class/infiniband/dev0/ports/1/gids/1", buf, sizeof(buf));
	CHECK(!strcmp(buf, "0000:0000:0000:0000:0000:ffff:0a00:0002"), "gid1 %s", buf);
	read_rel("sys/class/infiniband/dev0/ports/1/gid_attrs/ndevs/1", buf, sizeof(buf));
	CHECK(!strcmp(buf, "eth9"), "ndev %s", buf);
	/* 10.0.0.1 goes, 10.0.0.3 comes: .2 stays at 1, .3 takes slot 0 */
	set_v4(&nd, 0, "10.0.0.2");
	set_v4(&nd, 1, "10.0.0.3");
	CHECK(uroce_tree_refresh_port(ibdev, &nd) == 0, "refresh 2");
	read_rel("sys/class/infiniband/dev0/ports/1/gids/1", buf, sizeof(buf));
	CHECK(!strcmp(buf, "0000:0000:0000:0000:0000:ffff:0a00:0002"), "kept gid1 %s", buf);
	read_rel("sys/class/infiniband/dev0/ports/1/gids/0", buf, sizeof(buf));
	CHECK(!strcmp(buf, "0000:0000:0000:0000:0000:ffff:0a00:0003"), "new gid0 %s", buf);
	nd.n_addrs = 0;
	CHECK(uroce_tree_refresh_port(ibdev, &nd) == 0, "refresh 3");
	read_rel("sys/class/infiniband/dev0/ports/1/gids/1", buf, sizeof(buf));
	CHECK(!strcmp(buf, "0000:0000:0000:0000:0000:0000:0000:0000"), "cleared %s", buf);
	read_rel("sys/class/infiniband/dev0/ports/1/gid_attrs/ndevs/1", buf, sizeof(buf));
	CHECK(!strcmp(buf, ""), "cleared ndev '%s'", buf);

	/* MTU mapping: IB MTU that fits beside the RoCEv2 headers */
	CHECK(uroce_netdev_ib_mtu(1500) == IBV_MTU_1024, "1500 -> 1024");
	CHECK(uroce_netdev_ib_mtu(65536) == IBV_MTU_4096, "lo -> 4096");
	CHECK(uroce_netdev_ib_mtu(9000) == IBV_MTU_4096, "9000 -> 4096");
	CHECK(uroce_netdev_ib_mtu(4200) == IBV_MTU_4096, "4200 -> 4096");
	CHECK(uroce_netdev_ib_mtu(4150) == IBV_MTU_2048, "4150 -> 2048");

	/* GUID from MAC (EUI-64) */
	struct uroce_netdev m = { .mac = { 0x52, 0x54, 0x00, 0x77, 0x00, 0x02 } };
	CHECK(uroce_netdev_guid(&m) == 0x505400fffe770002ULL, "guid %llx",
	      (unsigned long long)uroce_netdev_guid(&m));

	/* removing the record and syncing prunes the device */
	CHECK(uroce_reg_remove(root, "dev0") == 0, "remove");
	CHECK(uroce_tree_sync(sys, NULL, 0) == 0, "sync empty");
	struct stat st;
	CHECK(stat(ibdev, &st) != 0, "pruned ibdev");
	snprintf(buf, sizeof(buf), "%s/class/infiniband_verbs/uverbs7", sys);
	CHECK(stat(buf, &st) != 0, "pruned uverbs7");

	/* A file that holds its text is left alone (the same inode); one that
	 * differs, even by a longer tail, is replaced. */
	struct stat a, b;
	snprintf(buf, sizeof(buf), "%s/same", root);
	CHECK(uroce_write_file(buf, "text\n") == 0 && stat(buf, &a) == 0, "write new");
	CHECK(uroce_write_file(buf, "text\n") == 0 && stat(buf, &b) == 0 && a.st_ino == b.st_ino,
	      "same text: not rewritten");
	CHECK(uroce_write_file(buf, "text") == 0 && stat(buf, &b) == 0 && a.st_ino != b.st_ino,
	      "shorter text: rewritten");
	char back[16];
	CHECK(uroce_read_file(buf, back, sizeof(back)) == 4 && !memcmp(back, "text", 4),
	      "shorter text read back");
	CHECK(uroce_write_file(buf, "texts") == 0 && uroce_read_file(buf, back, sizeof(back)) == 5 &&
	      !memcmp(back, "texts", 5), "longer text read back");

	/* A symlink is replaced by a file even when its target holds the text. */
	char link[PATH_MAX + 64];
	snprintf(link, sizeof(link), "%s/link", root);
	CHECK(symlink(buf, link) == 0, "symlink");
	CHECK(uroce_write_file(link, "texts") == 0 && lstat(link, &b) == 0 && S_ISREG(b.st_mode),
	      "symlink replaced by a file");

	/* lo through libnl: real netlink */
	struct uroce_netdev lo;
	CHECK(uroce_netdev_query("lo", &lo) == 0 && lo.ifindex == 1 && lo.admin_up, "query lo");
	CHECK(uroce_netdev_query("no-such-if0", &lo) == -ENODEV, "unknown netdev");

	uroce_rmtree(root);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
