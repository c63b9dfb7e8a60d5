#!/bin/sh
# busybox init's sysinit in the sleep lab guest: the tmpfs the app writes to, the host name, and
# suspend-to-RAM as deep (S3; s2idle never woke within 240 s in QEMU).
mkdir -p /tmp /run /data /dev/pts /dev/shm
# /tmp is left on the root's RAM overlay, not given a tmpfs of its own: a checkout and venv under
# /tmp on the host (a CI's clean clone) are in the image at that path, and a tmpfs would hide them.
chmod 1777 /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=0700 tmpfs /data
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mkdir -p -m 0700 /run/user/0
hostname sleeplab
ip link set lo up
echo deep > /sys/power/mem_sleep
echo "sleeplab: up, mem_sleep: $(cat /sys/power/mem_sleep)"
