/* SPDX-License-Identifier: GPL-2.0 */
/*
 * f2fs on-disk format: offsets, sizes, constants and little-endian accessors.
 *
 * Structures are described as byte offsets into a block rather than as C
 * structs: every field is read through le16/le32/le64 helpers so that the
 * code is endian-clean and never depends on compiler packing.  The layout
 * facts follow the kernel's include/linux/f2fs_fs.h and f2fs-tools'
 * include/f2fs_fs.h.
 */
#ifndef F2FS_FORMAT_H
#define F2FS_FORMAT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* ---- little-endian accessors (unaligned-safe) ---- */
static inline uint16_t get_le16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t get_le32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[3] << 24);
}
static inline uint64_t get_le64(const void *p)
{
	const uint8_t *b = p;
	return (uint64_t)get_le32(b) | ((uint64_t)get_le32(b + 4) << 32);
}
static inline void put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}
static inline void put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}
static inline void put_le64(void *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/* ---- geometry ---- */
#define F2FS_BLKSIZE		4096u
#define F2FS_BLKSIZE_BITS	12
#define F2FS_SUPER_OFFSET	1024
#define F2FS_SUPER_MAGIC	0xF2F52010u
#define F2FS_SB_SIZE		3072
#define F2FS_MAX_SEGMENT	((16u * 1024 * 1024) / 2)
#define F2FS_MIN_SEGMENTS	9

#define NULL_ADDR		0x0u
#define NEW_ADDR		0xFFFFFFFFu
#define COMPRESS_ADDR		0xFFFFFFFEu

/* ---- superblock field offsets (struct f2fs_super_block, 3072 bytes) ---- */
#define SB_MAGIC		0
#define SB_MAJOR_VER		4
#define SB_MINOR_VER		6
#define SB_LOG_SECTORSIZE	8
#define SB_LOG_SECTORS_PER_BLOCK 12
#define SB_LOG_BLOCKSIZE	16
#define SB_LOG_BLOCKS_PER_SEG	20
#define SB_SEGS_PER_SEC		24
#define SB_SECS_PER_ZONE	28
#define SB_CHECKSUM_OFFSET	32
#define SB_BLOCK_COUNT		36	/* le64 */
#define SB_SECTION_COUNT	44
#define SB_SEGMENT_COUNT	48
#define SB_SEGMENT_COUNT_CKPT	52
#define SB_SEGMENT_COUNT_SIT	56
#define SB_SEGMENT_COUNT_NAT	60
#define SB_SEGMENT_COUNT_SSA	64
#define SB_SEGMENT_COUNT_MAIN	68
#define SB_SEGMENT0_BLKADDR	72
#define SB_CP_BLKADDR		76
#define SB_SIT_BLKADDR		80
#define SB_NAT_BLKADDR		84
#define SB_SSA_BLKADDR		88
#define SB_MAIN_BLKADDR		92
#define SB_ROOT_INO		96
#define SB_NODE_INO		100
#define SB_META_INO		104
#define SB_UUID			108	/* 16 bytes */
#define SB_VOLUME_NAME		124	/* le16[512] */
#define SB_EXTENSION_COUNT	1148
#define SB_EXTENSION_LIST	1152	/* 64 x 8 bytes */
#define SB_CP_PAYLOAD		1664
#define SB_VERSION		1668	/* 256 bytes */
#define SB_INIT_VERSION		1924	/* 256 bytes */
#define SB_FEATURE		2180
#define SB_ENCRYPTION_LEVEL	2184
#define SB_ENCRYPT_PW_SALT	2185	/* 16 bytes */
#define SB_DEVS			2201	/* 8 x (64-byte path + le32 segments) */
#define SB_QF_INO		2745	/* le32[3] */
#define SB_HOT_EXT_COUNT	2757
#define SB_S_ENCODING		2758
#define SB_S_ENCODING_FLAGS	2760
#define F2FS_ENC_UTF8_12_1	1	/* s_encoding: the only one the kernel knows */
#define F2FS_ENC_STRICT_MODE_FL	0x1	/* s_encoding_flags: reject non-UTF-8 names */
#define SB_S_STOP_REASON	2762	/* 32 bytes */
#define SB_S_ERRORS		2794	/* 16 bytes */
#define SB_CRC			3068	/* SB_CHKSUM_OFFSET */

#define F2FS_MAX_EXTENSION	64
#define F2FS_EXTENSION_LEN	8
#define MAX_VOLUME_NAME		512
#define MAX_DEVICES		8
#define MAX_PATH_LEN		64
#define F2FS_DEVICE_SIZE	68
#define F2FS_MAX_QUOTAS		3

/* superblock feature bits */
#define F2FS_FEATURE_ENCRYPT			0x0001
#define F2FS_FEATURE_BLKZONED			0x0002
#define F2FS_FEATURE_ATOMIC_WRITE		0x0004
#define F2FS_FEATURE_EXTRA_ATTR			0x0008
#define F2FS_FEATURE_PRJQUOTA			0x0010
#define F2FS_FEATURE_INODE_CHKSUM		0x0020
#define F2FS_FEATURE_FLEXIBLE_INLINE_XATTR	0x0040
#define F2FS_FEATURE_QUOTA_INO			0x0080
#define F2FS_FEATURE_INODE_CRTIME		0x0100
#define F2FS_FEATURE_LOST_FOUND			0x0200
#define F2FS_FEATURE_VERITY			0x0400
#define F2FS_FEATURE_SB_CHKSUM			0x0800
#define F2FS_FEATURE_CASEFOLD			0x1000
#define F2FS_FEATURE_COMPRESSION		0x2000
#define F2FS_FEATURE_RO				0x4000
#define F2FS_FEATURE_DEVICE_ALIAS		0x8000
#define F2FS_FEATURE_PACKED_SSA			0x10000

/* ---- checkpoint (struct f2fs_checkpoint, 192 bytes + bitmaps) ---- */
#define CP_CHECKPOINT_VER	0	/* le64 */
#define CP_USER_BLOCK_COUNT	8	/* le64 */
#define CP_VALID_BLOCK_COUNT	16	/* le64 */
#define CP_RSVD_SEGMENT_COUNT	24
#define CP_OVERPROV_SEGMENT_COUNT 28
#define CP_FREE_SEGMENT_COUNT	32
#define CP_CUR_NODE_SEGNO	36	/* le32[8] */
#define CP_CUR_NODE_BLKOFF	68	/* le16[8] */
#define CP_CUR_DATA_SEGNO	84	/* le32[8] */
#define CP_CUR_DATA_BLKOFF	116	/* le16[8] */
#define CP_CKPT_FLAGS		132
#define CP_PACK_TOTAL_BLOCK_COUNT 136
#define CP_PACK_START_SUM	140
#define CP_VALID_NODE_COUNT	144
#define CP_VALID_INODE_COUNT	148
#define CP_NEXT_FREE_NID	152
#define CP_SIT_VER_BITMAP_BYTESIZE 156
#define CP_NAT_VER_BITMAP_BYTESIZE 160
#define CP_CHECKSUM_OFFSET	164
#define CP_ELAPSED_TIME		168	/* le64 */
#define CP_ALLOC_TYPE		176	/* u8[16] */
#define CP_SIT_NAT_VERSION_BITMAP 192
#define CP_CHKSUM_OFFSET_DEFAULT 4092	/* CP_CHKSUM_OFFSET */
#define CP_MIN_CHKSUM_OFFSET	CP_SIT_NAT_VERSION_BITMAP

#define MAX_ACTIVE_LOGS		16
#define MAX_ACTIVE_NODE_LOGS	8
#define MAX_ACTIVE_DATA_LOGS	8

#define CP_UMOUNT_FLAG		0x00000001
#define CP_ORPHAN_PRESENT_FLAG	0x00000002
#define CP_COMPACT_SUM_FLAG	0x00000004
#define CP_ERROR_FLAG		0x00000008
#define CP_FSCK_FLAG		0x00000010
#define CP_FASTBOOT_FLAG	0x00000020
#define CP_CRC_RECOVERY_FLAG	0x00000040
#define CP_NAT_BITS_FLAG	0x00000080
#define CP_TRIMMED_FLAG		0x00000100
#define CP_NOCRC_RECOVERY_FLAG	0x00000200
#define CP_LARGE_NAT_BITMAP_FLAG 0x00000400
#define CP_QUOTA_NEED_FSCK_FLAG	0x00000800
#define CP_DISABLED_FLAG	0x00001000
#define CP_DISABLED_QUICK_FLAG	0x00002000
#define CP_RESIZEFS_FLAG	0x00004000

/* ---- orphan block ---- */
#define F2FS_ORPHANS_PER_BLOCK	1020
#define ORPHAN_FOOTER		(F2FS_ORPHANS_PER_BLOCK * 4)	/* reserved le32 */
#define ORPHAN_BLK_ADDR		(ORPHAN_FOOTER + 4)	/* le16 */
#define ORPHAN_BLK_COUNT	(ORPHAN_FOOTER + 6)	/* le16 */
#define ORPHAN_ENTRY_COUNT	(ORPHAN_FOOTER + 8)	/* le32 */
#define ORPHAN_CHECK_SUM	(ORPHAN_FOOTER + 12)	/* le32 */

/* ---- current segments ---- */
enum {
	CURSEG_HOT_DATA = 0,	/* directory entry blocks */
	CURSEG_WARM_DATA,	/* data blocks */
	CURSEG_COLD_DATA,	/* multimedia or GCed data blocks */
	CURSEG_HOT_NODE,	/* direct node blocks of directory files */
	CURSEG_WARM_NODE,	/* direct node blocks of normal files */
	CURSEG_COLD_NODE,	/* indirect node blocks */
	NR_CURSEG_TYPE,
};
#define NR_CURSEG_DATA_TYPE	3
#define NR_CURSEG_NODE_TYPE	3

/* ---- NAT ---- */
#define NAT_ENTRY_SIZE		9	/* version u8, ino le32, block_addr le32 */
#define NAT_ENTRY_PER_BLOCK	(F2FS_BLKSIZE / NAT_ENTRY_SIZE)	/* 455 */
#define NAT_E_VERSION		0
#define NAT_E_INO		1
#define NAT_E_BLOCK_ADDR	5

/* ---- SIT ---- */
#define SIT_VBLOCK_MAP_SIZE	64
#define SIT_ENTRY_SIZE		74	/* vblocks le16, valid_map[64], mtime le64 */
#define SIT_ENTRY_PER_BLOCK	(F2FS_BLKSIZE / SIT_ENTRY_SIZE)	/* 55 */
#define SIT_E_VBLOCKS		0
#define SIT_E_VALID_MAP		2
#define SIT_E_MTIME		66
#define SIT_VBLOCKS_SHIFT	10
#define SIT_VBLOCKS_MASK	((1u << SIT_VBLOCKS_SHIFT) - 1)

/* ---- segment summary block ---- */
#define ENTRIES_IN_SUM		512
#define SUMMARY_SIZE		7	/* nid le32, version u8, ofs_in_node le16 */
#define SUM_FOOTER_SIZE		5	/* entry_type u8, check_sum le32 */
#define SUM_ENTRIES_SIZE	(SUMMARY_SIZE * ENTRIES_IN_SUM)	/* 3584 */
#define SUM_JOURNAL_SIZE	(F2FS_BLKSIZE - SUM_FOOTER_SIZE - SUM_ENTRIES_SIZE) /* 507 */
#define SUM_JOURNAL_OFFSET	SUM_ENTRIES_SIZE
#define SUM_FOOTER_OFFSET	(F2FS_BLKSIZE - SUM_FOOTER_SIZE)
#define SUM_TYPE_NODE		1
#define SUM_TYPE_DATA		0
#define NAT_JOURNAL_ENTRY_SIZE	13	/* nid le32 + nat entry */
#define SIT_JOURNAL_ENTRY_SIZE	78	/* segno le32 + sit entry */
#define NAT_JOURNAL_ENTRIES	((SUM_JOURNAL_SIZE - 2) / NAT_JOURNAL_ENTRY_SIZE) /* 38 */
#define SIT_JOURNAL_ENTRIES	((SUM_JOURNAL_SIZE - 2) / SIT_JOURNAL_ENTRY_SIZE) /* 6 */
/* compact summaries: the two journals, then data summaries packed */
#define COMPACT_SUM_SIZE	(SUM_JOURNAL_SIZE * 2)

/* ---- node block ---- */
#define NODE_FOOTER_SIZE	24
#define NODE_FOOTER_OFFSET	(F2FS_BLKSIZE - NODE_FOOTER_SIZE)	/* 4072 */
#define NF_NID			(NODE_FOOTER_OFFSET + 0)
#define NF_INO			(NODE_FOOTER_OFFSET + 4)
#define NF_FLAG			(NODE_FOOTER_OFFSET + 8)
#define NF_CP_VER		(NODE_FOOTER_OFFSET + 12)	/* le64 */
#define NF_NEXT_BLKADDR		(NODE_FOOTER_OFFSET + 20)
#define COLD_BIT_SHIFT		0
#define FSYNC_BIT_SHIFT		1
#define DENT_BIT_SHIFT		2
#define OFFSET_BIT_SHIFT	3
#define XATTR_NODE_OFFSET	((0xFFFFFFFFu << OFFSET_BIT_SHIFT) >> OFFSET_BIT_SHIFT)

#define DEF_ADDRS_PER_INODE	923
#define DEF_ADDRS_PER_BLOCK	1018
#define NIDS_PER_BLOCK		1018
#define DEFAULT_INLINE_XATTR_ADDRS 50
#define DEF_INLINE_RESERVED_SIZE 1
#define MAX_INLINE_XATTR_ADDRS_BOUND (DEF_ADDRS_PER_INODE / 4)	/* kernel: MAX_INLINE_XATTR_SIZE */

#define NODE_DIR1_BLOCK		(DEF_ADDRS_PER_INODE + 1)
#define NODE_DIR2_BLOCK		(DEF_ADDRS_PER_INODE + 2)
#define NODE_IND1_BLOCK		(DEF_ADDRS_PER_INODE + 3)
#define NODE_IND2_BLOCK		(DEF_ADDRS_PER_INODE + 4)
#define NODE_DIND_BLOCK		(DEF_ADDRS_PER_INODE + 5)

/* ---- inode (struct f2fs_inode) field offsets ---- */
#define I_MODE			0	/* le16 */
#define I_ADVISE		2	/* u8 */
#define I_INLINE		3	/* u8 */
#define I_UID			4
#define I_GID			8
#define I_LINKS			12
#define I_SIZE			16	/* le64 */
#define I_BLOCKS		24	/* le64 */
#define I_ATIME			32	/* le64 */
#define I_CTIME			40	/* le64 */
#define I_MTIME			48	/* le64 */
#define I_ATIME_NSEC		56
#define I_CTIME_NSEC		60
#define I_MTIME_NSEC		64
#define I_GENERATION		68
#define I_CURRENT_DEPTH		72	/* also i_gc_failures (le16) for files */
#define I_XATTR_NID		76
#define I_FLAGS			80
#define I_PINO			84
#define I_NAMELEN		88
#define I_NAME			92	/* 255 bytes */
#define I_DIR_LEVEL		347	/* u8 */
#define I_EXT			348	/* f2fs_extent: fofs, blk_addr, len */
#define I_ADDR			360	/* le32[923], extra attrs overlay the start */
#define I_NID			(I_ADDR + 4 * DEF_ADDRS_PER_INODE)	/* le32[5] = 4052 */
/* extra attributes, relative to the inode block (they overlay i_addr) */
#define I_EXTRA_ISIZE		360	/* le16 */
#define I_INLINE_XATTR_SIZE	362	/* le16, in 4-byte words */
#define I_PROJID		364
#define I_INODE_CHECKSUM	368
#define I_CRTIME		372	/* le64 */
#define I_CRTIME_NSEC		380
#define I_COMPR_BLOCKS		384	/* le64 */
#define I_COMPRESS_ALGORITHM	392	/* u8 */
#define I_LOG_CLUSTER_SIZE	393	/* u8 */
#define I_COMPRESS_FLAG		394	/* le16 */
#define F2FS_TOTAL_EXTRA_ATTR_SIZE 36
#define F2FS_NAME_LEN		255

/* extra_isize values a field needs to be present */
#define F2FS_EXTRA_ISIZE_FOR(field_end_off) ((field_end_off) - I_EXTRA_ISIZE)

/* i_inline */
#define F2FS_INLINE_XATTR	0x01
#define F2FS_INLINE_DATA	0x02
#define F2FS_INLINE_DENTRY	0x04
#define F2FS_DATA_EXIST		0x08
#define F2FS_INLINE_DOTS	0x10
#define F2FS_EXTRA_ATTR		0x20
#define F2FS_PIN_FILE		0x40
#define F2FS_COMPRESS_RELEASED	0x80

/* i_advise */
#define FADVISE_COLD_BIT	0x01
#define FADVISE_LOST_PINO_BIT	0x02
#define FADVISE_ENCRYPT_BIT	0x04
#define FADVISE_ENC_NAME_BIT	0x08
#define FADVISE_KEEP_SIZE_BIT	0x10
#define FADVISE_HOT_BIT		0x20
#define FADVISE_VERITY_BIT	0x40

/* i_flags (same values as FS_*_FL) */
#define F2FS_SYNC_FL		0x00000008
#define F2FS_COMPR_FL		0x00000004
#define F2FS_IMMUTABLE_FL	0x00000010
#define F2FS_APPEND_FL		0x00000020
#define F2FS_NODUMP_FL		0x00000040
#define F2FS_NOATIME_FL		0x00000080
#define F2FS_NOCOMP_FL		0x00000400
#define F2FS_INDEX_FL		0x00001000
#define F2FS_DIRSYNC_FL		0x00010000
#define F2FS_PROJINHERIT_FL	0x20000000
#define F2FS_CASEFOLD_FL	0x40000000

/* FS_*_FL bits FS_IOC_GETFLAGS reports (F2FS_GETTABLE_FS_FL); f2fs uses the same values. */
#define FS_ENCRYPT_FL		0x00000800
#define FS_INLINE_DATA_FL	0x10000000
#define FS_NOCOW_FL		0x00800000
#define FS_VERITY_FL		0x00100000
#define F2FS_GETTABLE_FS_FL (F2FS_COMPR_FL | F2FS_SYNC_FL | F2FS_IMMUTABLE_FL | F2FS_APPEND_FL | \
			     F2FS_NODUMP_FL | F2FS_NOATIME_FL | F2FS_NOCOMP_FL | F2FS_INDEX_FL | \
			     F2FS_DIRSYNC_FL | F2FS_PROJINHERIT_FL | FS_ENCRYPT_FL | \
			     FS_INLINE_DATA_FL | FS_NOCOW_FL | FS_VERITY_FL | F2FS_CASEFOLD_FL)
/* ... and the ones FS_IOC_SETFLAGS changes (F2FS_SETTABLE_FS_FL) */
#define F2FS_SETTABLE_FS_FL (F2FS_COMPR_FL | F2FS_SYNC_FL | F2FS_IMMUTABLE_FL | F2FS_APPEND_FL | \
			     F2FS_NODUMP_FL | F2FS_NOATIME_FL | F2FS_NOCOMP_FL | F2FS_DIRSYNC_FL | \
			     F2FS_PROJINHERIT_FL | F2FS_CASEFOLD_FL)

/* ---- directory entries ---- */
#define F2FS_SLOT_LEN		8
#define F2FS_SLOT_LEN_BITS	3
#define SIZE_OF_DIR_ENTRY	11	/* hash le32, ino le32, name_len le16, type u8 */
#define NR_DENTRY_IN_BLOCK	214
#define SIZE_OF_DENTRY_BITMAP	27
#define SIZE_OF_RESERVED	3
#define DENTRY_BLOCK_DENTRIES	(SIZE_OF_DENTRY_BITMAP + SIZE_OF_RESERVED)	/* 30 */
#define DENTRY_BLOCK_FILENAMES	(DENTRY_BLOCK_DENTRIES + SIZE_OF_DIR_ENTRY * NR_DENTRY_IN_BLOCK) /* 2384 */
#define DE_HASH			0
#define DE_INO			4
#define DE_NAME_LEN		8
#define DE_FILE_TYPE		10
#define MAX_DIR_HASH_DEPTH	63
#define MAX_DIR_BUCKETS		(1u << ((MAX_DIR_HASH_DEPTH / 2) - 1))
/* The kernel masks the dentry hash with F2FS_HASH_COL_BIT (1ULL << 63), which
 * leaves a 32-bit hash unchanged: no bit of an on-disk hash_code is reserved. */
#define GET_DENTRY_SLOTS(x)	(((x) + F2FS_SLOT_LEN - 1) >> F2FS_SLOT_LEN_BITS)

enum {
	F2FS_FT_UNKNOWN,
	F2FS_FT_REG_FILE,
	F2FS_FT_DIR,
	F2FS_FT_CHRDEV,
	F2FS_FT_BLKDEV,
	F2FS_FT_FIFO,
	F2FS_FT_SOCK,
	F2FS_FT_SYMLINK,
	F2FS_FT_MAX,
};

/* ---- xattrs ---- */
#define F2FS_XATTR_MAGIC	0xF2F52011u
#define XATTR_HDR_SIZE		24	/* magic, refcount, 4 reserved words */
#define XATTR_ENTRY_HDR_SIZE	4	/* name_index u8, name_len u8, value_size le16 */
#define XATTR_ROUND		3
#define XATTR_ALIGN(x)		(((x) + XATTR_ROUND) & ~XATTR_ROUND)
#define VALID_XATTR_BLOCK_SIZE	(F2FS_BLKSIZE - NODE_FOOTER_SIZE)	/* 4072 */
#define F2FS_XATTR_INDEX_USER			1
#define F2FS_XATTR_INDEX_POSIX_ACL_ACCESS	2
#define F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT	3
#define F2FS_XATTR_INDEX_TRUSTED		4
#define F2FS_XATTR_INDEX_LUSTRE			5
#define F2FS_XATTR_INDEX_SECURITY		6
#define F2FS_XATTR_INDEX_ADVISE			7
#define F2FS_XATTR_INDEX_ENCRYPTION		9
#define F2FS_XATTR_INDEX_VERITY			11

/* ---- compression ---- */
#define COMPRESS_DATA_HDR	24	/* clen le32, chksum le32, reserved le32[4] */
#define COMPRESS_LZO		0
#define COMPRESS_LZ4		1
#define COMPRESS_ZSTD		2
#define COMPRESS_LZORLE		3
#define COMPRESS_MAX		4
#define MIN_COMPRESS_LOG_SIZE	2
#define MAX_COMPRESS_LOG_SIZE	8
/* i_compress_flag: bit 0 asks for the checksum, the level sits in bits 8-15 */
#define COMPRESS_CHKSUM		0x0001
#define COMPRESS_LEVEL_OFFSET	8
/* compress_data: le32 clen, le32 chksum, le32 reserved[4], then the data */
#define COMPRESS_DATA_CLEN	0
#define COMPRESS_DATA_CHKSUM	4

#endif /* F2FS_FORMAT_H */
