// SPDX-License-Identifier: GPL-2.0
/*
 * railbind.ko: the PCIe/NUMA view of every GPU and NIC, as a text snapshot
 * on /dev/railbind that any user may read, with a generation counter that
 * moves (poll, sysfs, uevent) whenever the fabric changes.
 *
 *	$ cat /dev/railbind
 *	$ cat /sys/class/misc/railbind/generation
 *
 * What a reader gets (format in ABI.md): a header line made for this
 * descriptor, the shared topology snapshot of the current generation
 * (railbind_snap.c), then this reader's peer-memory part: every peer
 * record for openers with CAP_PERFMON or CAP_SYS_ADMIN, the node-wide
 * counters only for everyone else (they name no GPU, NIC or tenant), and
 * an end record counting every line. ->open does no work: misc_open()
 * calls it under misc_mtx, which a driver probing during a PCI rescan
 * needs for misc_register().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <generated/utsrelease.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
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
		 "Replace p2pdma's host-bridge whitelist (and AMD Zen rule): comma list of VVVV:DDDD[:same], or none");

static atomic_long_t railbind_gen = ATOMIC_LONG_INIT(1);
static DECLARE_WAIT_QUEUE_HEAD(railbind_wait);
static const char *railbind_last_event = "load";

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

/*
 * One descriptor: the parts it reads as one file, attached at a read from
 * offset 0 (so poll + pread(fd, .., 0) follows changes on one descriptor)
 * and kept for reads further on, so one pass reads one consistent view.
 */
struct railbind_file {
	struct mutex lock;		/* read and llseek on this descriptor */
	bool full;			/* the opener may see every peer record */
	unsigned long gen;		/* generation last read here, for poll */
	struct railbind_snap *snap;	/* shared topology part */
	size_t head_len;
	char head[320];			/* the header, this descriptor's own */
	struct railbind_buf tail;	/* peer part and end record, its own */
};

static int railbind_open(struct inode *inode, struct file *file)
{
	struct railbind_file *rf;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL_ACCOUNT);
	if (!rf)
		return -ENOMEM;
	mutex_init(&rf->lock);
	/*
	 * Decided once, from the opener, as kallsyms does: a descriptor handed
	 * to a privileged program later shows that program only what its
	 * opener could see. Peer records say which GPU and NIC other users'
	 * jobs move data between, how much and when.
	 */
	rf->full = ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
		   ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	rf->gen = railbind_generation();
	file->private_data = rf;
	return 0;
}

static int railbind_release(struct inode *inode, struct file *file)
{
	struct railbind_file *rf = file->private_data;

	railbind_snap_put(rf->snap);
	railbind_buf_free(&rf->tail);
	kfree(rf);
	return 0;
}

/* Caller holds rf->lock. On success the snapshot is pinned: unpin it. */
static int railbind_attach(struct railbind_file *rf)
{
	struct railbind_snap *snap;
	struct railbind_buf tail;
	int ret;

	snap = railbind_snap_get();
	if (IS_ERR(snap))
		return PTR_ERR(snap);
	ret = railbind_buf_init(&tail, 0);
	if (!ret)
		ret = railbind_peer_render(&tail, rf->full);
	/* Every line: the header, the shared part, this tail and the end itself. */
	railbind_emit(&tail, "end records=%u\n", 1 + snap->lines + tail.lines + 1);
	if (ret || tail.err) {
		ret = ret ? ret : tail.err;
		railbind_buf_free(&tail);
		railbind_snap_unpin(snap);
		railbind_snap_put(snap);
		return ret;
	}
	rf->head_len = scnprintf(rf->head, sizeof(rf->head),
				 "railbind format=%d version=%s generation=%lu kernel=%s peer_provider=%s peer_state=%s view=%s\n",
				 RAILBIND_FORMAT, RAILBIND_VERSION, snap->gen, UTS_RELEASE,
				 railbind_peer_provider, railbind_peer_state(),
				 rf->full ? "full" : "restricted");
	railbind_snap_put(rf->snap);
	railbind_buf_free(&rf->tail);
	rf->snap = snap;
	rf->tail = tail;
	WRITE_ONCE(rf->gen, snap->gen);
	return 0;
}

static size_t railbind_size(const struct railbind_file *rf)
{
	return rf->head_len + rf->snap->len + rf->tail.len;
}

/* The three parts read as one buffer, like simple_read_from_buffer(). */
static ssize_t railbind_copy_out(struct railbind_file *rf, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	const struct {
		const char *data;
		size_t len;
	} parts[] = {
		{ rf->head, rf->head_len },
		{ rf->snap->text, rf->snap->len },
		{ rf->tail.data, rf->tail.len },
	};
	loff_t pos = *ppos, base = 0;
	size_t done = 0, off, take;
	unsigned int i;

	if (pos < 0)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(parts) && done < count; base += parts[i++].len) {
		if (pos >= base + (loff_t)parts[i].len)
			continue;
		off = pos - base;
		take = min(count - done, parts[i].len - off);
		take -= copy_to_user(ubuf + done, parts[i].data + off, take);
		done += take;
		pos += take;
		if (pos < base + (loff_t)parts[i].len)
			break;	/* a fault: stop at what was copied */
	}
	if (!done && count && pos < (loff_t)railbind_size(rf))
		return -EFAULT;
	*ppos = pos;
	return done;
}

static ssize_t railbind_read(struct file *file, char __user *ubuf, size_t count,
			     loff_t *ppos)
{
	struct railbind_file *rf = file->private_data;
	ssize_t ret = 0;

	if (mutex_lock_killable(&rf->lock))
		return -EINTR;
	/* A snapshot superseded too often since it was attached has no text left. */
	if (*ppos == 0 || !rf->snap)
		ret = railbind_attach(rf);
	else
		ret = railbind_snap_pin(rf->snap);
	if (!ret) {
		ret = railbind_copy_out(rf, ubuf, count, ppos);
		railbind_snap_unpin(rf->snap);
	}
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
	loff_t ret = 0;

	if (mutex_lock_killable(&rf->lock))
		return -EINTR;
	if (!rf->snap) {
		ret = railbind_attach(rf);
		if (!ret)
			railbind_snap_unpin(rf->snap);
	}
	if (!ret)
		ret = fixed_size_llseek(file, off, whence, railbind_size(rf));
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

static ssize_t irqoff_max_ns_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	unsigned int steps;

	return sysfs_emit(buf, "%llu\n", railbind_peer_irqoff_max(&steps));
}
static DEVICE_ATTR_RO(irqoff_max_ns);

static ssize_t irqoff_max_steps_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	unsigned int steps;

	railbind_peer_irqoff_max(&steps);
	return sysfs_emit(buf, "%u\n", steps);
}
static DEVICE_ATTR_RO(irqoff_max_steps);

static struct attribute *railbind_attrs[] = {
	&dev_attr_generation.attr,
	&dev_attr_version.attr,
	&dev_attr_format.attr,
	&dev_attr_extra_classes.attr,
	&dev_attr_peer_provider.attr,
	&dev_attr_peer_state.attr,
	&dev_attr_irqoff_max_ns.attr,
	&dev_attr_irqoff_max_steps.attr,
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
		pr_err("bad extra_classes \"%s\" (%d)\n", extra_classes, ret);
		return ret;
	}
	ret = railbind_p2p_init(p2p_hostbridges);
	if (ret) {
		pr_err("bad p2p_hostbridges \"%s\" (%d)\n", p2p_hostbridges, ret);
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
	railbind_snap_exit();
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
	railbind_snap_exit();
	railbind_peer_exit();
}

module_init(railbind_init);
module_exit(railbind_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("PCIe/NUMA topology, hotplug generation and peer-memory accounting for GPUs and NICs");
MODULE_VERSION(RAILBIND_VERSION);
