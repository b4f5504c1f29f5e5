// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Hotplug: a libudev monitor on the "udev" source (events after udev has
 * set the device up) filtered in the kernel to pci, infiniband, net and
 * misc (the railbind module's change events). Events come in bursts (a NIC
 * brings a PCI function, a netdev and an RDMA device), so the plan is
 * recomputed once, 100 ms after the last of them. Where no udevd runs
 * (containers, a bare initramfs) nothing is ever sent on the "udev" source,
 * so the kernel's own events are taken instead.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <libudev.h>
#include <sys/epoll.h>

#include "log.h"
#include "railbindd.h"

#define SETTLE_MS 100

static struct udev *udev;
static struct udev_monitor *mon;
static unsigned int settle_timer;
static char last_event[256];

static void settled(void *arg)
{
	(void)arg;
	settle_timer = 0;
	counters_sample();	/* a device that went or came is a link change */
	serve_refresh(last_event);
}

static void on_event(int fd, uint32_t events, void *arg)
{
	struct udev_device *d;

	(void)fd;
	(void)events;
	(void)arg;
	while ((d = udev_monitor_receive_device(mon))) {
		const char *sub = udev_device_get_subsystem(d);
		const char *name = udev_device_get_sysname(d);

		/* misc: only our own device, not every tty or input node. */
		if (!(sub && !strcmp(sub, "misc") && name && strcmp(name, "railbind"))) {
			snprintf(last_event, sizeof(last_event), "udev %s %s %s",
				 udev_device_get_action(d) ? udev_device_get_action(d) : "?",
				 sub ? sub : "?", name ? name : "?");
			rbd_log(LOG_DEBUG, "%s", last_event);
			if (settle_timer)
				sched_del_timer(settle_timer);
			settle_timer = sched_add_timer(SETTLE_MS, settled, NULL);
		}
		udev_device_unref(d);
	}
}

int udevmon_init(void)
{
	static const char *const subsystems[] = { "pci", "infiniband", "net", "misc", NULL };
	const char *const *s;
	int rc = -ENOMEM;

	if (conf.input)
		return 0;	/* a saved topology does not change with this host */
	udev = udev_new();
	if (udev)
		mon = udev_monitor_new_from_netlink(udev, access("/run/udev/control", F_OK) ?
						    "kernel" : "udev");
	if (!mon)
		goto fail;
	for (s = subsystems; *s; s++)
		if ((rc = udev_monitor_filter_add_match_subsystem_devtype(mon, *s, NULL)) < 0)
			goto fail;
	rc = udev_monitor_enable_receiving(mon);
	if (rc >= 0)
		rc = sched_add_fd(udev_monitor_get_fd(mon), EPOLLIN, on_event, NULL);
	if (rc >= 0)
		return 0;
fail:
	rbd_log(LOG_WARNING, "no udev monitor (%s): the plan follows hotplug only on SIGHUP",
		strerror(rc < 0 ? -rc : ENOMEM));
	udevmon_fini();
	return 0;
}

void udevmon_fini(void)
{
	if (settle_timer)
		sched_del_timer(settle_timer);
	settle_timer = 0;
	if (mon) {
		sched_del_fd(udev_monitor_get_fd(mon));
		udev_monitor_unref(mon);
	}
	mon = NULL;
	udev_unref(udev);
	udev = NULL;
}
