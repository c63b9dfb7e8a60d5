#!/bin/busybox sh
# The sleep lab guest's /init (in the initramfs): load the few modules the cloud kernel lacks
# built in, put a RAM overlay over the read-only system image, lay the checkout and the agent on
# it and hand over to busybox init (tests/sleeplab/README.md).
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /modules/order); do
  insmod "/modules/$module.ko" || echo "sleeplab init: insmod $module failed"
done
tries=0
while [ ! -b /dev/vda ] && [ "$tries" -lt 200 ]; do sleep 0.05; tries=$((tries + 1)); done
mkdir -p /lower /mem /newroot
mount -t ext4 -o ro /dev/vda /lower || { echo "sleeplab init: no system image"; poweroff -f; }
mount -t tmpfs -o mode=0755 tmpfs /mem
mkdir -p /mem/upper /mem/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/mem/upper,workdir=/mem/work /newroot
cp -a /boot-files/. /newroot/
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
exec switch_root /newroot /usr/bin/busybox init
