#!/bin/busybox sh
# /init of the Soft-RoCE guest; scripts/softroce-run copies it into the initramfs. Mounts
# the host's / read-only over 9p under a tmpfs overlay, loads rdma_rxe, brings up rxe0 on
# dummy0, runs the job's command in a chroot of it, writes the command's exit status to the
# job folder (125 when the guest cannot be set up) and powers off.
# /softroce.env, written by softroce-run beside this file, sets:
#   job   the host's job folder (shared over 9p as "job"): cmd.sh in, status out
#   kver  the guest kernel's version
#   mods  that kernel's modules folder (in the host's cache, seen through the 9p root)
# (For shellcheck: job, kver and mods come from /softroce.env; busybox's ulimit has -l.)
# shellcheck disable=SC1091,SC2154,SC3045
/bin/busybox --install -s /bin
export PATH=/bin
. /softroce.env
fail() {
  echo "softroce-run(guest): $*"
  echo 125 > "/newroot$job/status" 2>/dev/null
  poweroff -f
}
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio_pci 9pnet_virtio 9p overlay; do modprobe $m || fail "modprobe $m"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower ||
  fail "cannot mount the host's / over 9p"
mount -t tmpfs -o size=1g rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
  fail "overlay mount failed"
# The guest kernel's modules, from the cache, for modprobe here and in the chroot.
mkdir -p "/newroot/lib/modules/$kver"
mount --bind "/newroot$mods" "/newroot/lib/modules/$kver"
mount --bind "/newroot$mods" "/lib/modules/$kver"
for m in dummy crc32_generic rdma_rxe ib_uverbs rdma_ucm ib_umad; do
  modprobe $m || fail "modprobe $m"
done
for d in proc sys dev; do mount --bind /$d /newroot/$d; done
mkdir -p /newroot/dev/shm /newroot/dev/pts
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs run /newroot/run
# Last, so no other mount hides it (it may live under /tmp or /run).
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 job "/newroot$job" || fail "job share"
hostname softroce
chroot /newroot /bin/sh -c '
  ip link set lo up &&
  ip link set dummy0 mtu 9000 up &&
  ip addr add 10.9.9.1/24 dev dummy0 &&
  rdma link add rxe0 type rxe netdev dummy0' || fail "cannot bring up rxe0 on dummy0"
ulimit -l unlimited
chroot /newroot /bin/sh "$job/cmd.sh"
rc=$?
echo $rc > "/newroot$job/status"
sync
echo "softroce-run: exit status $rc"
poweroff -f
