// SPDX-License-Identifier: GPL-2.0
/*
 * railbind.ko: the PCIe/NUMA view of every GPU and NIC, as a text snapshot
 * on /dev/railbind that any user may read, with a generation counter that
 * moves (poll, sysfs, uevent) whenever the fabric changes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "railbind.h"

static char *extra_classes = "";
module_param(extra_classes, charp, 0444);
MODULE_PARM_DESC(extra_classes,
		 "More devices to track: comma list of gpu=VVVV:CCCC or nic=VVVV:CCCC (vendor hex or *, class base+sub hex)");

static char *p2p_hostbridges;
module_param(p2p_hostbridges, charp, 0444);
MODULE_PARM_DESC(p2p_hostbridges,
		 "Replace the built-in P2P host-bridge table: comma list of VVVV:DDDD[:same], or none");

static atomic_long_t railbind_gen = ATOMIC_LONG_INIT(1);
static DECLARE_WAIT_QUEUE_HEAD(railbind_wait);
static const char *railbind_last_event = "load";

struct railbind_file {
	struct mutex lock;	/* serialises read/llseek on one opener */
	struct railbind_buf buf;
	unsigned long gen;
};

unsigned long railbind_generation(void)
{
	return atomic_long_read(&railbind_gen);
}

static struct miscdevice railbind_misc;

/*
 * Notifiers can be reached with locks held that uevent delivery must not
 * nest under, so the uevent goes out from a work item.
 */
static void railbind_uevent_fn(struct work_struct *work)
{
	char gen[40], ev[40];
	char *envp[3];

	envp[0] = gen;
	envp[1] = ev;
	envp[2] = NULL;
	snprintf(gen, sizeof(gen), "RAILBIND_GENERATION=%lu", railbind_generation());
	snprintf(ev, sizeof(ev), "RAILBIND_EVENT=%s", READ_ONCE(railbind_last_event));
	kobject_uevent_env(&railbind_misc.this_device->kobj, KOBJ_CHANGE, envp);
}

static DECLARE_WORK(railbind_uevent_work, railbind_uevent_fn);
static bool railbind_live;

/* Called with railbind_lock held. */
void railbind_changed(const char *event)
{
	WRITE_ONCE(railbind_last_event, event);
	atomic_long_inc(&railbind_gen);
	wake_up_interruptible_all(&railbind_wait);
	if (READ_ONCE(railbind_live))
		schedule_work(&railbind_uevent_work);
}

static int railbind_open(struct inode *inode, struct file *file)
{
	struct railbind_file *rf;
	int ret;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL);
	if (!rf)
		return -ENOMEM;
	mutex_init(&rf->lock);
	ret = railbind_render(&rf->buf, &rf->gen);
	if (ret) {
		kfree(rf);
		return ret;
	}
	file->private_data = rf;
	return 0;
}

static int railbind_release(struct inode *inode, struct file *file)
{
	struct railbind_file *rf = file->private_data;

	kvfree(rf->buf.data);
	kfree(rf);
	return 0;
}

/*
 * A read from offset 0 after the generation moved renders a fresh
 * snapshot, so poll + pread(..., 0) follows changes on one descriptor.
 */
static ssize_t railbind_read(struct file *file, char __user *ubuf, size_t count,
			     loff_t *ppos)
{
	struct railbind_file *rf = file->private_data;
	ssize_t ret;

	mutex_lock(&rf->lock);
	if (*ppos == 0 && rf->gen != railbind_generation()) {
		struct railbind_buf nb = {};
		unsigned long gen;

		ret = railbind_render(&nb, &gen);
		if (ret)
			goto out;
		kvfree(rf->buf.data);
		rf->buf = nb;
		rf->gen = gen;
	}
	ret = simple_read_from_buffer(ubuf, count, ppos, rf->buf.data, rf->buf.len);
out:
	mutex_unlock(&rf->lock);
	return ret;
}

static __poll_t railbind_poll(struct file *file, poll_table *wait)
{
	struct railbind_file *rf = file->private_data;

	poll_wait(file, &railbind_wait, wait);
	if (READ_ONCE(rf->gen) != railbind_generation())
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static loff_t railbind_llseek(struct file *file, loff_t off, int whence)
{
	struct railbind_file *rf = file->private_data;
	loff_t ret;

	mutex_lock(&rf->lock);
	ret = fixed_size_llseek(file, off, whence, rf->buf.len);
	mutex_unlock(&rf->lock);
	return ret;
}

static const struct file_operations railbind_fops = {
	.owner = THIS_MODULE,
	.open = railbind_open,
	.release = railbind_release,
	.read = railbind_read,
	.poll = railbind_poll,
	.llseek = railbind_llseek,
};

static ssize_t generation_show(struct device *dev, struct device_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%lu\n", railbind_generation());
}
static DEVICE_ATTR_RO(generation);

static ssize_t version_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", RAILBIND_VERSION);
}
static DEVICE_ATTR_RO(version);

static ssize_t format_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", RAILBIND_FORMAT);
}
static DEVICE_ATTR_RO(format);

static ssize_t extra_classes_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", extra_classes ? extra_classes : "");
}
static DEVICE_ATTR_RO(extra_classes);

static ssize_t peer_provider_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", railbind_peer_provider);
}
static DEVICE_ATTR_RO(peer_provider);

static ssize_t peer_state_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", railbind_peer_state());
}
static DEVICE_ATTR_RO(peer_state);

static struct attribute *railbind_attrs[] = {
	&dev_attr_generation.attr,
	&dev_attr_version.attr,
	&dev_attr_format.attr,
	&dev_attr_extra_classes.attr,
	&dev_attr_peer_provider.attr,
	&dev_attr_peer_state.attr,
	NULL,
};
ATTRIBUTE_GROUPS(railbind);

static struct miscdevice railbind_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = DRIVER_NAME,
	.fops = &railbind_fops,
	.mode = 0444,
	.groups = railbind_groups,
};

static int __init railbind_init(void)
{
	int ret;

	ret = railbind_match_init(extra_classes);
	if (ret) {
		pr_err("bad extra_classes \"%s\"\n", extra_classes);
		return ret;
	}
	ret = railbind_p2p_init(p2p_hostbridges);
	if (ret) {
		pr_err("bad p2p_hostbridges \"%s\"\n", p2p_hostbridges);
		return ret;
	}
	/* Everything a reader reaches exists before the device appears. */
	ret = railbind_peer_init();
	if (ret)
		return ret;
	ret = railbind_topo_init();
	if (ret)
		goto err_peer;
	ret = misc_register(&railbind_misc);
	if (ret)
		goto err_topo;
	mutex_lock(&railbind_lock);
	WRITE_ONCE(railbind_live, true);
	mutex_unlock(&railbind_lock);
	return 0;

err_topo:
	railbind_topo_exit();
err_peer:
	railbind_peer_exit();
	return ret;
}

static void __exit railbind_exit(void)
{
	/* railbind_changed() runs under railbind_lock: none can queue after this. */
	mutex_lock(&railbind_lock);
	WRITE_ONCE(railbind_live, false);
	mutex_unlock(&railbind_lock);
	cancel_work_sync(&railbind_uevent_work);
	misc_deregister(&railbind_misc);
	railbind_topo_exit();
	railbind_peer_exit();
}

module_init(railbind_init);
module_exit(railbind_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("PCIe/NUMA topology, hotplug generation and peer-memory accounting for GPUs and NICs");
MODULE_VERSION(RAILBIND_VERSION);
