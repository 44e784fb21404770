// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the key control socket's request handler
 * (keysock_handle_msg in fuse/keysock.c, and the key and policy
 * operations of fuse/keyctl.c and fuse/keyclaims.c behind it), as a
 * client of the socket drives it, on a writable mount of an image with
 * the encrypt feature (a directory "d" with a file "f" in it, and an empty
 * directory "e").  Each input
 * gets a fresh mount (a copy-on-write overlay of the image) and a fresh
 * key control state.
 *
 * Input: records until the input ends, each
 *   u8  how   bits 0-1: the caller's uid: root, the daemon's, 1000, 1001
 *             bits 2-3: its capabilities: none, CAP_SYS_ADMIN, CAP_FOWNER, all
 *             bit 4:    take magic and version as given (else the valid ones)
 *             bit 5:    take the reserved words as given (else zero)
 *             bit 6:    the socket admits other users (allow_other)
 *   then sizeof(struct f2fs_keyctl_msg) bytes of the request (zeros past
 *   the end of the input).  A policy request's fd names, mod 5, the root,
 *   "d", "d/f", "e" or an inode number in use by nothing.
 *
 * Fails on: a crash or sanitizer report; an error outside 0..4095; an
 * added key's raw bytes left in the reply; a bad magic or version not
 * refused with EPROTO; a key added (v2) that its adder's status request
 * then does not see as present and added by self; a key whose last claim
 * was removed still present; a mount that does not unmount cleanly.
 * F2FS_FUZZ_TRACE=1 prints each request's operation and error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "f2fs_fuse.h"
#include "keyctl_internal.h"
#include "testdev.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IMAGE_MB	52

static uint8_t *base;
static size_t base_len;
static struct ovl *ovl;
static uint32_t nids[5];
static bool trace;		/* F2FS_FUZZ_TRACE set: each request and its error */

static void fail(const char *what, const struct f2fs_keyctl_msg *m)
{
	fprintf(stderr, "fuzz_keyctl: %s (op %u, error %d)\n", what, m->op, m->error);
	abort();
}

static void quiet_log(void *arg, enum f2fs_log_level lvl, const char *msg)
{
}

static int mount_overlay(struct f2fs_sb **sb)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = quiet_log };
	struct f2fs_dev *dev;
	int err = ovl_open_dev(ovl, false, &dev);

	return err ? err : f2fs_mount_dev(dev, &o, sb);
}

/* mkfs.f2fs -O encrypt, then "d", "d/f" and "e" made through the core. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[] = "/tmp/fuzz-keyctl-XXXXXX", cmd[256];
	const struct f2fs_cred cred = { .umask = 022 };
	struct f2fs_stat st;
	struct f2fs_sb *sb;
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, (off_t)IMAGE_MB << 20)) {
		perror("fuzz_keyctl: image");
		exit(1);
	}
	snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin mkfs.f2fs -q -f -O encrypt %s >/dev/null", path);
	if (system(cmd) != 0) {
		fprintf(stderr, "fuzz_keyctl: mkfs.f2fs -O encrypt failed\n");
		exit(1);
	}
	base_len = (size_t)IMAGE_MB << 20;
	base = malloc(base_len);
	if (!base || pread(fd, base, base_len, 0) != (ssize_t)base_len) {
		fprintf(stderr, "fuzz_keyctl: cannot read the image back\n");
		exit(1);
	}
	close(fd);
	unlink(path);
	ovl = ovl_new(base, base_len);
	if (!ovl || mount_overlay(&sb)) {
		fprintf(stderr, "fuzz_keyctl: the fresh image does not mount\n");
		exit(1);
	}
	nids[0] = f2fs_root_ino(sb);
	if (f2fs_mkdir(sb, nids[0], "d", 1, 0755, &cred, &st))
		exit(1);
	nids[1] = st.ino;
	if (f2fs_mknod(sb, nids[1], "f", 1, S_IFREG | 0644, 0, 0, &cred, &st))
		exit(1);
	nids[2] = st.ino;
	if (f2fs_mkdir(sb, nids[0], "e", 1, 0755, &cred, &st))
		exit(1);
	nids[3] = st.ino;
	nids[4] = 4000;
	if (f2fs_umount(sb))
		exit(1);
	/* the overlay's blocks become the base */
	for (uint32_t i = 0; i < ovl_nr_private(ovl); i++) {
		uint32_t b;
		const uint8_t *blk = ovl_private(ovl, i, &b);

		memcpy(base + (size_t)b * F2FS_BLKSIZE, blk, F2FS_BLKSIZE);
	}
	ovl_reset(ovl);
	trace = getenv("F2FS_FUZZ_TRACE") != NULL;
	return 0;
}

static int file_of(void *arg, int32_t fd, uint32_t *nid)
{
	*nid = nids[(uint32_t)fd % 5];
	return 0;
}

static void caller(struct f2fs_caller *who, uint8_t how)
{
	static const uint64_t caps[4] = {
		0, 1ull << F2FS_CAP_SYS_ADMIN, 1ull << F2FS_CAP_FOWNER, ~0ull,
	};
	const uid_t uids[4] = { 0, geteuid(), 1000, 1001 };

	memset(who, 0, sizeof(*who));
	who->uid = uids[how & 3];
	who->gid = who->uid;
	who->pidfd = -1;
	who->from_socket = true;
	who->caps_read = true;		/* never /proc: the input decides */
	who->caps = caps[how >> 2 & 3];
}

/* The status of spec as who sees it. */
static struct f2fs_keyctl_status status_of(struct f2fs_keyctl *kc, struct f2fs_caller *who,
					   const struct f2fs_keyctl_key_spec *spec)
{
	struct f2fs_keyctl_msg m = {
		.magic = F2FS_KEYCTL_MSG_MAGIC, .version = F2FS_KEYCTL_MSG_VERSION,
		.op = F2FS_KEYCTL_OP_KEY_STATUS,
	};

	m.u.status.spec = *spec;
	keysock_handle_msg(kc, who, &m, file_of, NULL);
	if (m.error)
		fail("status of a key just added or removed fails", &m);
	return m.u.status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct f2fs_fuse fs;
	struct f2fs_keyctl *kc;
	struct f2fs_sb *sb;
	size_t pos = 0;

	ovl_reset(ovl);
	if (mount_overlay(&sb))
		abort();		/* the pristine image always mounts */
	memset(&fs, 0, sizeof(fs));
	fs.sb = sb;
	fs.root_ino = nids[0];
	fs.log_level = F2FS_LOG_ERR;
	atomic_init(&fs.vfs_readonly, false);
	pthread_mutex_init(&fs.log_lock, NULL);
	if (f2fs_keyctl_new(&fs))
		abort();
	kc = fs.keyctl;
	while (pos < size) {
		struct f2fs_keyctl_msg m, req;
		struct f2fs_caller who;
		uint8_t how = data[pos++];
		size_t n = size - pos < sizeof(m) ? size - pos : sizeof(m);

		memset(&m, 0, sizeof(m));
		memcpy(&m, data + pos, n);
		pos += n;
		if (!(how & 0x10)) {
			m.magic = F2FS_KEYCTL_MSG_MAGIC;
			m.version = F2FS_KEYCTL_MSG_VERSION;
		}
		if (!(how & 0x20)) {
			m.reserved = 0;
			m.u.add.reserved = 0;
			m.u.add.spec.reserved = 0;
		}
		kc->allow_other = how & 0x40;
		caller(&who, how);
		req = m;
		keysock_handle_msg(kc, &who, &m, file_of, NULL);
		if (trace)
			fprintf(stderr, "fuzz_keyctl: caller %#x op %u: error %d\n", how, req.op, m.error);
		if (m.error < 0 || m.error > 4095)
			fail("an error outside 0..4095", &m);
		if (req.op == F2FS_KEYCTL_OP_ADD_KEY) {
			static const uint8_t zero[F2FS_KEYCTL_MAX_KEY];

			if (memcmp(m.u.add.raw, zero, sizeof(zero)))
				fail("the raw key is left in the reply", &m);
		}
		if ((req.magic != F2FS_KEYCTL_MSG_MAGIC || req.version != F2FS_KEYCTL_MSG_VERSION) &&
		    m.error != EPROTO)
			fail("a bad magic or version is not refused with EPROTO", &m);
		if (m.error)
			continue;
		if (req.op == F2FS_KEYCTL_OP_ADD_KEY &&
		    req.u.add.spec.type == F2FS_KEYCTL_SPEC_IDENTIFIER) {
			struct f2fs_keyctl_status s = status_of(kc, &who, &m.u.add.spec);

			if (s.status != F2FS_KEYCTL_STATUS_PRESENT ||
			    !(s.status_flags & F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF) || !s.user_count)
				fail("a key just added is not present, added by self", &m);
		}
		if (req.op == F2FS_KEYCTL_OP_REMOVE_KEY &&
		    !(m.u.remove.status_flags & F2FS_KEYCTL_REMOVAL_OTHER_USERS)) {
			struct f2fs_keyctl_status s = status_of(kc, &who, &req.u.remove.spec);

			if (s.status != F2FS_KEYCTL_STATUS_ABSENT)
				fail("a key removed for good is still present", &m);
		}
	}
	f2fs_keyctl_free(&fs);
	if (f2fs_umount(sb))
		abort();
	pthread_mutex_destroy(&fs.log_lock);
	return 0;
}
