#!/usr/bin/env bash
# make fsstress: fstests' fsstress, several processes at once, on f2fs-fuse
# mounts of fresh images in a few configurations.  A run passes when the
# daemon said nothing (no warning, no error: a need-fsck mark would say
# one), unmounted cleanly, and fsck.f2fs finds nothing to fix.
#
#   tests/fstests/stress.sh SRC BIN     (run.sh calls it with FSTESTS_STRESS=1)
#
# FSSTRESS_ROUNDS (default 8) rounds of FSSTRESS_OPS (default 5000)
# operations per process, each round two instances in a new directory (so
# processes of each share directories: p0 .. pN), with seeds of its own;
# every third round removes the round before last's, so small images go
# through cleaning and near-full allocation again and again.  After every
# second round the daemon is killed (SIGKILL) and the image mounted again,
# so roll-forward recovery replays what fsstress fsync()ed; its info lines
# are the only messages allowed.
# FSSTRESS_ONLY=name runs one configuration.
set -uo pipefail

SRC=$1
BIN=$2
FSSTRESS=$SRC/ltp/fsstress
WORK=${FSTESTS_DIR:-/var/tmp/f2fs-fuse-fstests}/stress
ROUNDS=${FSSTRESS_ROUNDS:-8}
OPS=${FSSTRESS_OPS:-5000}

[ -x "$FSSTRESS" ] || { echo "fsstress: $FSSTRESS not built" >&2; exit 1; }

# name, image size, fsstress processes, mkfs.f2fs features, mount options
configs=(
	"plain 2G 4 - -"
	"direct 2G 4 - direct"
	"small 300M 8 - dirty_bytes=1M,dirty_expire_ms=100,checkpoint_interval=1"
	"tiny-cache 1G 6 - cache_size=1048576,extent_cache_size=65536,dcache_size=0"
	"compress 1G 4 extra_attr,compression compress_extension=*,compress_algorithm=lz4"
	"nowriteback 1G 4 - nowriteback"
)

# the daemon in the foreground, its messages appended to $log; waits for the mount
start_daemon() {
	"$BIN" "${mount_args[@]}" "$img" "$mnt" >>"$log" 2>&1 &
	daemon=$!
	for _ in $(seq 100); do mountpoint -q "$mnt" && return 0; sleep 0.1; done
	return 1
}

# fsck.f2fs before 1.16 walks a hole in an indirect node of a compressed
# file with the wrong number of addresses per block (fixed upstream in July
# 2023, "should use inode when updating file offset"): past the hole it
# finds cluster heads off their cluster boundaries and miscounts i_blocks.
# The kernel's f2fs draws the same complaint (its reproducer: a 4-block
# write of zeros at block 3944 of a compressed file; f2fs-fuse gives the
# same image and the same output).  With such an fsck, a check of the
# compressed setup whose problems are exactly those is reported, not failed.
old_fsck_compress_miscount() {
	fsck.f2fs -V 2>&1 | grep -qE 'fsck.f2fs 1\.(1[0-5]|[0-9])\.' || return 1
	! grep -E '\[Fail\]|\[FIX\]|\[ASSERT\]' "$1" | grep -vqE \
		'\] dn\.addr\[[0-9]+\] = 0$|has i_blocks: [0-9a-f]+, but has [0-9]+ blocks$|\] i_blocks=0x[0-9a-f]+ -> 0x[0-9a-f]+$|\] i_compr_blocks=0x[0-9a-f]+ -> 0x[0-9a-f]+$|valid_block_count matching with CP +\[Fail\]|other corrupted bugs +\[Fail\]'
}

mkdir -p "$WORK"
failed=()
for c in "${configs[@]}"; do
	read -r name size procs features opts <<<"$c"
	[ -n "${FSSTRESS_ONLY:-}" ] && [ "$FSSTRESS_ONLY" != "$name" ] && continue
	img=$WORK/$name.img mnt=$WORK/$name.mnt log=$WORK/$name.log
	rm -f "$img"; truncate -s "$size" "$img"; mkdir -p "$mnt"
	mkfs_args=(-f -q)
	[ "$features" != - ] && mkfs_args+=(-O "$features")
	mkfs.f2fs "${mkfs_args[@]}" "$img" >/dev/null || { failed+=("$name (mkfs)"); continue; }
	mount_args=(-f)
	[ "$opts" != - ] && mount_args+=(-o "$opts")
	: >"$log"
	if ! start_daemon; then
		failed+=("$name (mount)"); cat "$log"; continue
	fi
	start=$SECONDS
	for r in $(seq 1 "$ROUNDS"); do
		# two instances in one tree: their processes share directories
		"$FSSTRESS" -d "$mnt/r$r" -n "$OPS" -p "$procs" -s "$((r * 7919 + ${#name}))" \
			>"$WORK/$name.fsstress" 2>&1 &
		other=$!
		"$FSSTRESS" -d "$mnt/r$r" -n "$OPS" -p "$procs" -s "$((r * 104729 + ${#name}))" \
			>"$WORK/$name.fsstress2" 2>&1
		wait "$other"
		[ $((r % 3)) = 0 ] && [ "$r" -gt 2 ] && rm -rf "$mnt/r$((r - 2))"
		if [ $((r % 2)) = 0 ] && [ "$r" -lt "$ROUNDS" ]; then
			# a file fsync()ed just before the crash: roll-forward must bring it
			# back (unless the image is full: then it is not there to check)
			dd if=/dev/urandom of="$WORK/marker" bs=4k count=3 status=none
			marked=1
			dd if="$WORK/marker" of="$mnt/marker$r" bs=4k conv=fsync status=none \
				2>/dev/null || marked=
			kill -9 "$daemon"; wait "$daemon" 2>/dev/null
			umount -l "$mnt"
			if ! start_daemon; then
				echo "remount after the crash failed" >>"$log"; break
			fi
			[ -z "$marked" ] || cmp -s "$WORK/marker" "$mnt/marker$r" ||
				echo "marker$r, fsync()ed before the crash, is not as written" >>"$log"
		fi
	done
	fusermount3 -u "$mnt"
	wait "$daemon"; rc=$?
	fsck.f2fs -f --dry-run "$img" >"$WORK/$name.fsck" 2>&1; frc=$?
	problems=$(grep -cE '\[Fail\]|\[FIX\]|\[ASSERT\]' "$WORK/$name.fsck")
	if [ "$problems" != 0 ] && [ "$features" != - ] && [[ "$features" == *compression* ]] &&
	   old_fsck_compress_miscount "$WORK/$name.fsck"; then
		echo "fsstress $name: fsck.f2fs $(fsck.f2fs -V 2>&1 | awk '{print $2}') miscounts a" \
		     "sparse compressed file (its known bug, fixed upstream); not counted"
		problems=0 frc=0
	fi
	printf 'fsstress %-11s %s rounds of %s ops x 2 x %s processes, %4d s: ' \
		"$name" "$ROUNDS" "$OPS" "$procs" "$((SECONDS - start))"
	said=$(grep -vE ': roll-forward recovery: [0-9]+ (fsync\(\)ed )?node block|: recovery: inode [0-9]+, name .*: ok$|: checkpoint: pack [12] is invalid, using pack [12]$' "$log")
	if [ "$rc" != 0 ] || [ -n "$said" ] || [ "$frc" != 0 ] || [ "$problems" != 0 ]; then
		echo "FAILED (daemon exit $rc, fsck exit $frc, $problems fsck problems)"
		echo "$said" | head -20; grep -E '\[Fail\]|\[FIX\]|\[ASSERT\]' "$WORK/$name.fsck" | head
		failed+=("$name")
	else
		echo "ok"
		rm -f "$img"
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fsstress: failed: ${failed[*]} (images and logs in $WORK)"
	exit 1
fi
echo "fsstress: all passed"
