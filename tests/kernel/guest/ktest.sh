# Shell functions for guest scripts (busybox sh); sourced by the scripts
# run_guest.py makes.  MNT is where the image is mounted.
MNT=${MNT:-/mnt/f2fs}

# kmount [OPTIONS] [DEVICE]: mount DEVICE (default $KTEST_DISK0) at $MNT
kmount() {
	mkdir -p "$MNT"
	if [ -n "$1" ]; then
		mount -t f2fs -o "$1" "${2:-$KTEST_DISK0}" "$MNT"
	else
		mount -t f2fs "${2:-$KTEST_DISK0}" "$MNT"
	fi
}

# kumount: sync and unmount $MNT
kumount() {
	sync
	umount "$MNT"
}

# kmanifest NAME: the manifest of $MNT into $KTEST_OUT/NAME, range digests of
# files too large to hash into $KTEST_OUT/NAME.ranges
kmanifest() {
	python3 -m ktest_guest manifest "$MNT" --ranges "$KTEST_OUT/$1.ranges" >"$KTEST_OUT/$1"
}

# kcrash: stop the machine the way a power cut would, without syncing or
# unmounting anything; $KTEST_OUT (with rc 0 and the kernel log) is saved
# to the output disk first.  Nothing after it runs.
kcrash() {
	echo 0 >"$KTEST_OUT/rc"
	dmesg >"$KTEST_OUT/dmesg"
	(cd "$KTEST_OUT" && tar -cf "$KTEST_OUTDEV" .) && blockdev --flushbufs "$KTEST_OUTDEV"
	echo "KTEST-RESULT: ok" >/dev/console
	echo "KTEST-OUT-WRITTEN" >/dev/console
	echo "KTEST-CRASH" >/dev/console
	poweroff -f -n
	sleep 10
}
