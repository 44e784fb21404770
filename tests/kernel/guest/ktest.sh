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
