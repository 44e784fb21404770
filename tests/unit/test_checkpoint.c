// SPDX-License-Identifier: GPL-2.0
/*
 * A device that loses writes the way one opened through the page cache
 * does when the hardware fails (a full thin pool, a dm-error table): the
 * writes succeed, nothing reaches the medium, and the next flush reports
 * EIO once.  A checkpoint or fsync that meets the error must be the last:
 * a second checkpoint would find the flush clean and commit NAT and SIT
 * blocks that reference what was lost.  The medium must keep the last good
 * checkpoint, which mounts and which fsck.f2fs finds clean.
 */
#include "rwimage.h"

struct lossy {
	uint8_t *medium;	/* what the hardware holds */
	size_t len;
	bool failing;		/* writes are lost */
	bool error_pending;	/* the next flush says EIO */
	unsigned int lost;
};

static int lossy_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		    uint64_t off, size_t total)
{
	struct lossy *l = f2fs_dev_priv(dev);

	if (off > l->len || total > l->len - off)
		return -EIO;
	for (int i = 0; i < iovcnt; off += iov[i].iov_len, i++) {
		if (!write)
			memcpy(iov[i].iov_base, l->medium + off, iov[i].iov_len);
		else if (!l->failing)
			memcpy(l->medium + off, iov[i].iov_base, iov[i].iov_len);
	}
	if (write && l->failing) {
		l->lost++;
		l->error_pending = true;
	}
	return 0;
}

static int lossy_flush(struct f2fs_dev *dev)
{
	struct lossy *l = f2fs_dev_priv(dev);

	if (!l->error_pending)
		return 0;
	l->error_pending = false;	/* reported once, as errseq does */
	return -EIO;
}

static int lossy_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return 0;
}

static void lossy_release(struct f2fs_dev *dev)
{
}

static const struct f2fs_dev_ops lossy_ops = {
	.rw = lossy_rw, .flush = lossy_flush, .discard = lossy_discard,
	.release = lossy_release, .in_memory = true,
};

static int mount_lossy(struct lossy *l, struct f2fs_sb **sb)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	struct f2fs_dev *dev;
	int err = f2fs_dev_open_ops(&lossy_ops, l, l->len, false, &dev);

	return err ? err : f2fs_mount_dev(dev, &o, sb);
}

static int create(struct f2fs_sb *sb, const char *name, uint32_t *ino)
{
	const struct f2fs_cred cred = { .umask = 022 };
	struct f2fs_stat st;
	int err = f2fs_mknod(sb, f2fs_root_ino(sb), name, strlen(name), S_IFREG | 0644, 0, 0,
			     &cred, &st);

	if (!err && ino)
		*ino = st.ino;
	return err;
}

/* What fails first: a checkpoint (sync) or an fsync's node write. */
static void lose_writes(const struct rwimage *im, bool by_fsync)
{
	struct lossy l = { .len = im->len };
	struct rwimage back = { .len = im->len };
	struct f2fs_sb *sb = NULL;
	uint32_t ino = 0;
	int err;

	l.medium = malloc(im->len);
	if (!l.medium)
		return;
	memcpy(l.medium, im->buf, im->len);
	err = mount_lossy(&l, &sb);
	CHECK(err == 0, "mount over the lossy device: %d (%s)", err, rw_last_error);
	if (!sb)
		goto out;
	CHECK(create(sb, "kept", NULL) == 0 && f2fs_sync_fs(sb, false) == 0,
	      "a file in a good checkpoint");
	/* many new files: NAT and SIT entries to move out of the journals */
	l.failing = true;
	for (int i = 0; i < 200; i++) {
		char name[16];

		snprintf(name, sizeof(name), "lost%03d", i);
		create(sb, name, &ino);
	}
	if (by_fsync) {
		const struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = 4096 };
		struct f2fs_stat st;

		f2fs_setattr(sb, ino, &sa, &st);
		err = f2fs_fsync(sb, ino, false);
		CHECK(err == -EIO, "the fsync meets the lost writes: %d", err);
	} else {
		err = f2fs_sync_fs(sb, false);
		CHECK(err == -EIO, "the checkpoint meets the lost writes: %d", err);
	}
	CHECK(l.lost > 0, "writes were lost (%u)", l.lost);
	l.failing = false;	/* the hardware is back; the error was reported */
	CHECK(create(sb, "after", NULL) != 0, "no change is taken after the failure");
	err = f2fs_sync_fs(sb, false);
	CHECK(f2fs_cp_error(sb), "checkpoints are stopped (sync said %d)", err);
	f2fs_umount(sb);
	sb = NULL;

	/* the medium holds the last good checkpoint, whole */
	back.buf = l.medium;
	CHECK(rw_mount(&back) == 0, "the medium mounts again");
	if (back.sb) {
		struct f2fs_stat st;

		CHECK(f2fs_lookup(back.sb, f2fs_root_ino(back.sb), "kept", 4, &st) == 0,
		      "the file of the good checkpoint is there");
		f2fs_umount(back.sb);
		back.sb = NULL;
	}
	CHECK(rw_fsck_clean(&back), "fsck.f2fs after lost writes (%s)",
	      by_fsync ? "fsync" : "checkpoint");
out:
	free(l.medium);
}

/*
 * A checkpoint commits with its closing block as a FUA write after one
 * flush, as the kernel's (REQ_PREFLUSH | REQ_FUA); the backend's own FUA
 * write when it has one.
 */
struct fua_dev {
	uint8_t *medium;
	size_t len;
	unsigned int flushes, fua_writes;
	uint64_t fua_off;
};

static int fua_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, size_t total)
{
	struct fua_dev *f = f2fs_dev_priv(dev);

	for (int i = 0; i < iovcnt; off += iov[i].iov_len, i++) {
		if (write)
			memcpy(f->medium + off, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, f->medium + off, iov[i].iov_len);
	}
	return 0;
}

static int fua_write(struct f2fs_dev *dev, const struct iovec *iov, int iovcnt, uint64_t off,
		     size_t total)
{
	struct fua_dev *f = f2fs_dev_priv(dev);

	f->fua_writes++;
	f->fua_off = off;
	return fua_rw(dev, true, iov, iovcnt, off, total);
}

static int fua_flush(struct f2fs_dev *dev)
{
	((struct fua_dev *)f2fs_dev_priv(dev))->flushes++;
	return 0;
}

static const struct f2fs_dev_ops fua_ops = {
	.rw = fua_rw, .flush = fua_flush, .discard = lossy_discard,
	.release = lossy_release, .write_fua = fua_write, .in_memory = true,
};

static void commit_is_fua(const struct rwimage *im)
{
	struct fua_dev f = { .len = im->len };
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	unsigned int flushes;
	uint64_t pack_end;
	int err;

	f.medium = malloc(im->len);
	if (!f.medium)
		return;
	memcpy(f.medium, im->buf, im->len);
	err = f2fs_dev_open_ops(&fua_ops, &f, f.len, false, &dev);
	if (!err)
		err = f2fs_mount_dev(dev, &o, &sb);
	CHECK(err == 0, "mount: %d (%s)", err, rw_last_error);
	if (sb) {
		CHECK(create(sb, "one", NULL) == 0, "a change");
		f.fua_writes = 0;
		flushes = f.flushes;
		CHECK(f2fs_sync_fs(sb, false) == 0, "checkpoint");
		CHECK(f.fua_writes == 1, "one FUA write per checkpoint (%u)", f.fua_writes);
		CHECK(f.flushes - flushes == 1, "one flush before it (%u)", f.flushes - flushes);
		/* the closing block of the pack just written: the last of its blocks */
		pack_end = ((uint64_t)f2fs_cp_pack_start(sb) +
			    get_le32(sb->ckpt + CP_PACK_TOTAL_BLOCK_COUNT) - 1) * F2FS_BLKSIZE;
		CHECK(f.fua_off == pack_end, "the FUA write is the pack's closing block (%llu, "
		      "not %llu)", (unsigned long long)f.fua_off, (unsigned long long)pack_end);
		f2fs_umount(sb);
		{
			const struct rwimage back = { .buf = f.medium, .len = f.len };

			CHECK(rw_fsck_clean(&back), "fsck.f2fs after the FUA commits");
		}
	}
	free(f.medium);
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_checkpoint");
	f2fs_umount(im.sb);
	im.sb = NULL;
	lose_writes(&im, false);
	lose_writes(&im, true);
	commit_is_fua(&im);
	rw_nr_errors = 0;
	rw_done(&im);
	return check_done("test_checkpoint");
}
