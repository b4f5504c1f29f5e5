// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Applying a binding (apply.c), which parses the plan's CPU and node lists
 * itself so that a rank never loads hwloc: each case runs in a child
 * process, applies a binding as the broker would send it, and reports what
 * the kernel then says of the child (sched_getaffinity, get_mempolicy), or
 * the error. Expected values are the lists written in each case.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "affinity.h"
#include "client.h"

/* What a child saw: the result of aff_binding_apply, its CPUs and its policy. */
struct seen {
	int rc;
	int mode;
	unsigned long nodes;
	cpu_set_t cpus;
};

static struct seen apply_in_child(const char *cpus, const char *mems, const char *policy,
				  unsigned long flags)
{
	struct seen s = { 0 };
	char text[512];
	int fd[2], status;
	pid_t pid;

	snprintf(text, sizeof(text),
		 "{\"local_rank\":0,\"gpu\":{\"pci\":\"0000:02:00.0\"},\"env\":{},"
		 "\"cpus\":\"%s\",\"mems\":\"%s\",\"mem_policy\":\"%s\"}",
		 cpus, mems, policy);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct aff_binding *b = NULL;

		close(fd[0]);
		s.rc = aff_binding_from_text(text, "broker", NULL, 1, &b);
		if (!s.rc)
			s.rc = aff_binding_apply(b, flags);
		sched_getaffinity(0, sizeof(s.cpus), &s.cpus);
		syscall(SYS_get_mempolicy, &s.mode, &s.nodes, 8 * sizeof(s.nodes), NULL, 0);
		aff_binding_unref(b);
		_exit(write(fd[1], &s, sizeof(s)) == (ssize_t)sizeof(s) ? 0 : 1);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &s, sizeof(s)), (ssize_t)sizeof(s));
	close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return s;
}

static void test_binds_cpus_and_prefers_node(void **state)
{
	struct seen s = apply_in_child("0", "0", "preferred", 0);

	(void)state;
	if (s.rc == -ENOSYS)
		skip();	/* a kernel without NUMA */
	assert_int_equal(s.rc, 0);
	assert_int_equal(CPU_COUNT(&s.cpus), 1);
	assert_true(CPU_ISSET(0, &s.cpus));
	assert_int_equal(s.mode, MPOL_PREFERRED);
	assert_int_equal(s.nodes, 1);
}

static void test_bind_policy(void **state)
{
	struct seen s = apply_in_child("0", "0", "bind", AFF_APPLY_MEMS);

	(void)state;
	if (s.rc == -ENOSYS)
		skip();
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.mode, MPOL_BIND);
	assert_int_equal(s.nodes, 1);
}

/* "0,0" and "0-0" are one node: preferred, not preferred-many. */
static void test_repeated_node_is_one(void **state)
{
	struct seen s = apply_in_child("0", "0,0-0", "preferred", AFF_APPLY_MEMS);

	(void)state;
	if (s.rc == -ENOSYS)
		skip();
	assert_int_equal(s.rc, 0);
	assert_int_equal(s.mode, MPOL_PREFERRED);
	assert_int_equal(s.nodes, 1);
}

/* A range, on however many CPUs this machine has. */
static void test_cpu_range(void **state)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	char list[32];
	struct seen s;

	(void)state;
	if (n < 2)
		skip();
	snprintf(list, sizeof(list), "0-%ld", n - 1);
	s = apply_in_child(list, "0", "preferred", AFF_APPLY_CPUS);
	assert_int_equal(s.rc, 0);
	assert_int_equal(CPU_COUNT(&s.cpus), n);
}

static void test_not_a_list(void **state)
{
	static const char *const bad[] = { "1,0=", "0-", "-1", "3-1", "0,,1", "0 ", "x", "0,", "65536" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct seen s = apply_in_child(bad[i], "0", "preferred", AFF_APPLY_CPUS);

		if (s.rc != -EINVAL)
			fail_msg("cpus \"%s\": %d, expected -EINVAL", bad[i], s.rc);
		s = apply_in_child("0", bad[i], "preferred", AFF_APPLY_MEMS);
		if (s.rc != -EINVAL)
			fail_msg("mems \"%s\": %d, expected -EINVAL", bad[i], s.rc);
	}
}

/* What this host does not have: the binding cannot be enforced here. */
static void test_not_on_this_host(void **state)
{
	(void)state;
	assert_int_equal(apply_in_child("", "0", "preferred", AFF_APPLY_CPUS).rc, -EXDEV);
	assert_int_equal(apply_in_child("65535", "0", "preferred", AFF_APPLY_CPUS).rc, -EXDEV);
	assert_int_equal(apply_in_child("0", "", "preferred", AFF_APPLY_MEMS).rc, -EXDEV);
	assert_int_equal(apply_in_child("0", "1024", "preferred", AFF_APPLY_MEMS).rc, -EXDEV);
	assert_int_equal(apply_in_child("0", "1023", "bind", AFF_APPLY_MEMS).rc, -EXDEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binds_cpus_and_prefers_node),
		cmocka_unit_test(test_bind_policy),
		cmocka_unit_test(test_repeated_node_is_one),
		cmocka_unit_test(test_cpu_range),
		cmocka_unit_test(test_not_a_list),
		cmocka_unit_test(test_not_on_this_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
