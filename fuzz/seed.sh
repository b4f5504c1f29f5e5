#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# seed.sh TARGET DIR: write the seed inputs of fuzz target TARGET into DIR,
# from the project's fixtures and the tiny seeds in fuzz/seeds/. Nothing of
# this is committed: DIR is under build-fuzz/. Needs $TOP and, for hwloc and
# plan_spec, $FIXTURES (the generated build/fixtures/*.xml).
set -eu
target=$1 dir=$2
mkdir -p "$dir"
seed() { printf '%b' "$2" > "$dir/seed-$1"; }
case $target in
nccl)
	cp "$TOP"/fuzz/seeds/nccl/*.xml "$dir/"
	# The inline NCCL files of the unit tests, one seed per C string block.
	awk -v dir="$dir" '
		/"<system/ { n++; out = dir "/unit-" n ".xml"; on = 1 }
		on { line = $0; sub(/^[\t ]*"/, "", line); sub(/"[;,)]*[\t ]*$/, "", line);
		     gsub(/\\n/, "\n", line); gsub(/\\"/, "\"", line); printf "%s", line > out }
		on && /<\/system>/ { on = 0; close(out) }' "$TOP/tests/unit/test_nccl.c"
	;;
hwloc)
	for f in $FIXTURES; do cp "$f" "$dir/"; done
	;;
config)
	cp "$TOP"/fuzz/seeds/config/*.conf "$dir/"
	seed vm 'accelerator = 1af4:1050\nethernet-rails = yes\n'
	seed bad 'accelerator = 10de:123456\nexclude-nic =\n'
	seed policy 'memory-policy = preferred\ninclude-nic = 0000:aa:00.0, eth0\n'
	;;
gres)
	seed node 'AutoDetect=off\nName=gpu File=/dev/nvidia0 Cores=0-55 Links=-1,12\nName=gpu File=/dev/nvidia1 Cores=56-111 Links=12,-1\n'
	seed range 'NodeName=fuzzhost Name=gpu Type=h100 File=/dev/nvidia[0-3,5] COREs=0,1 # four\nNodeName=tux[0-3] Name=gpu File=/dev/nvidia[0-7]\n'
	seed count 'Name=gpu Count=4 Cores=0-7\nName=mps Count=100 File=/dev/nvidia0\nName=nic File=/dev/infiniband/uverbs0\n'
	seed bad 'Name=gpu File=/dev/nvidia[3-1] Cores=1-0\nName=gpu Cores=,\n'
	;;
cpumask)
	seed one 'ffffffff'
	seed words 'ffffffff,00000000,0000ffff'
	seed short '1,0'
	seed bad 'fffffffff,'
	;;
fabric)
	# The first byte picks the parser (fuzz_fabric.c): state, lid, rate,
	# GID, GID type, count, GID attribute, counter attribute.
	seed state '\00004: ACTIVE'
	seed phys '\00007: Phy Test'
	seed lid '\00010x1a'
	seed rate '\0002400 Gb/sec (4X NDR)'
	seed gid '\0003fe80:0000:0000:0000:0002:c903:0031:7e91'
	seed gid4 '\00030000:0000:0000:0000:0000:ffff:0a00:0001'
	seed type '\0004RoCE v2'
	seed mtu '\00059000'
	seed gidinfo '\00063 RoCEv2 0000:0000:0000:0000:0000:ffff:0a00:0001 eth0'
	seed ctr '\0007symbol_error 65535 16'
	seed bad '\0006-1 RoCEv9 fe80::1 -'
	;;
kmod_snapshot)
	# The ABI's example, its end line corrected to count the lines given.
	awk '/^```/ { if (on) exit; n++; if (n == 3) on = 1; next } on' \
		"$TOP/kmod/ABI.md" > "$dir/abi.tmp"
	lines=$(grep -c . "$dir/abi.tmp")
	sed "s/^end records=.*/end records=$lines/" "$dir/abi.tmp" > "$dir/abi-example"
	rm -f "$dir/abi.tmp"
	seed min 'railbind format=1\nend records=2\n'
	seed dev 'railbind format=1 version=0.1.0\ndev pci=0000:01:00.0 kind=gpu numa=0\nend records=3\n'
	;;
pcicfg)
	# id 0x000d (ACS); 256 bytes of conventional space; an AER header (0x0001,
	# next 0x140) then ACS at 0x140 (next 0), its cap 0x005f and ctl 0x001d.
	{ printf '\015\000'; head -c 256 /dev/zero
	  printf '\001\000\001\024'; head -c 60 /dev/zero
	  printf '\015\000\001\000\137\000\035\000'; head -c 184 /dev/zero; } > "$dir/acs"
	{ printf '\015\000'; head -c 256 /dev/zero; printf '\377\377\377\377'; } > "$dir/gone"
	{ printf '\001\000'; head -c 64 /dev/zero; } > "$dir/short"
	# A PCI Express endpoint: capability list at 0x40, Device Control MPS 256,
	# MRRS 512, Relaxed Ordering (gdr-readiness).
	{ printf '\015\000\206\200\000\000\000\000\020\000'; head -c 44 /dev/zero
	  printf '\100'; head -c 11 /dev/zero
	  printf '\020\000\002\000\000\000\000\000\060\040'; head -c 182 /dev/zero; } > "$dir/pcie"
	# VPD as a ConnectX-8's: an ID string, VPD-R with V3 (the Data Direct
	# pairing UUID) and RV, the end tag (aff_pcicfg_vpd_keyword).
	{ printf '\000\000\202\002\000CX\220\053\000V3\04412345678-abcd-0000-1111-999988887777RV\001\000\170'; } > "$dir/vpd"
	# A loop: the first header points at itself.
	{ printf '\015\000'; head -c 256 /dev/zero; printf '\001\000\001\020'; } > "$dir/loop"
	;;
plan_spec)
	seed all '-\n'
	seed cpus '0-13,112-125\n'
	seed gpus '-\n0,3,7'
	seed pci '0-223\n0000:1b:00.0,0000:29:00.0'
	seed both '1,3,5-9\n2,1'
	;;
broker_request)
	# The protocol's requests (docs/PROTOCOL.md), and its edges.
	seed plan '{"v":1,"op":"plan","rank":1,"job":"j1","id":1}'
	seed plan-all '{"v":1,"op":"plan","visible":"0,2","isolate_gpu":true,"lease":"conn"}'
	seed plan-none '{"v":1,"op":"plan","rank":0,"lease":"none","job":"slurm.42"}'
	seed status '{"v":1,"op":"status","id":"x"}'
	seed watch '{"v":1,"op":"watch","id":[1,{"a":null}]}'
	seed topo '{"v":1,"op":"topo"}\r'
	seed audit ' {"op":"audit","v":1} '
	seed reload '{"v":1,"op":"reload","id":1.5e3}'
	seed verify '{"v":1,"op":"verify","pids":[4711,1,2147483647],"id":9}'
	seed verify-all '{"v":1,"op":"verify"}'
	seed old '{"v":2,"op":"status"}'
	seed nul '{"v":1,"op":"plan","job":"a\\u0000b"}'
	seed utf8 '{"v":1,"op":"plan","job":"\303\251t\303\251"}'
	seed deep '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]'
	seed trail '{"v":1,"op":"status"}{"v":1}'
	# What json-c's lenient (and strict) tokener took (issue 25).
	seed quote "{'v':1,\"op\":\"status\"}"
	seed comma '{"v":1,"op":"status",}'
	seed comment '/* c */{"v":1,"op":"status"}'
	seed lone '{"v":1,"op":"plan","job":"a\\ud800b"}'
	seed pair '{"v":1,"op":"plan","job":"a\\ud83d\\ude00"}'
	seed nan '{"v":1,"op":"status","id":NaN}'
	seed twice '{"v":1,"op":"plan","job":"x","job":"y"}'
	seed hangul '{"v":1,"op":"plan","job":"def\\u115fault"}'
	;;
rank_env)
	# RANK\nCLAIM\nOWN\nJOB\nENVIRON (NUL-separated, as /proc/PID/environ).
	seed zero '0\n0\n0,1\ndefault\nPATH=/bin\0CUDA_VISIBLE_DEVICES=0,1\0'
	seed slurm '7\n0000:1b:00.0\n0000:1b:00.0,0000:43:00.0\n4711\nROCR_VISIBLE_DEVICES=2\0CUDA_VISIBLE_DEVICES=\0'
	seed wide '12\n0,2\n0,1\nj\nCUDA_VISIBLE_DEVICES=0,1'
	seed bad '+5\n,,\n\n\303\251\nCUDA_VISIBLE_DEVICES'
	;;
verify)
	# STAT %%\n NUMA_MAPS %%\n ENVIRON %%\n LEASES %%\n COUNTERS (railbind verify's inputs).
	seed rank '4711 (python3) S 1 4711 4711 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 101530 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 1 0 0\n%%%%\n55d0a8a2b000 default heap anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n7ffc0f4e1000 bind:0 stack anon=9 dirty=9 N0=8 N1=1 kernelpagesize_kB=4\n7f0000000000 prefer (many):0-1 anon=512 N1=512 kernelpagesize_kB=2048\n7f2a4c000000 default file=/usr/lib/x86_64-linux-gnu/libc.so.6 mapped=40 N0=40 kernelpagesize_kB=4\n%%%%\nLOCAL_RANK=3\0CUDA_VISIBLE_DEVICES=3\0NCCL_IB_HCA==mlx5_3:1\0SLURM_JOB_ID=81723\0%%%%\n{"schema":"railbind.leases/1","leases":[{"job":"j1","rank":2,"pid":4711,"uid":0,"gpu":"0000:14:00.0","cpus":"0","until":"exit","start":101530}]}%%%%\n{"schema":"railbind.counters/1","source":"broker","boot_id":"b","since":1,"updated":2,"links":[{"pci":"0000:04:00.0","speed":16.0,"width":16,"gpu_link":true,"present":true,"changes":2,"speed_idle":5,"aer":[1,0,0],"aer_base":[3,0,0]}],"ports":[{"name":"mlx5_0","port":1,"state":"ACTIVE","present":true,"changes":2,"downs":1}]}'
	seed comm '1 (a) b) (c) Z 0%%%%\nx weighted interleave:0-3 N3=1\n%%%%\nLOCAL_RANK\0=\0LOCAL_RANK=1\0LOCAL_RANK=2%%%%\n{"leases":[{"pid":0},{"pid":2,"job":"x","rank":1}]}%%%%\n{"schema":"railbind.counters/1","links":[{"pci":"bad"},{"pci":"0000:04:00.0"},{"pci":"0000:04:00.0"}],"ports":[{"name":"","port":1},{"name":"a","port":256}]}'
	;;
optics)
	# Each module layout, healthy and faulty (tests/optics/mkeeprom.c).
	"$FUZZ_BIN/mkeeprom" "$dir"
	;;
optics_history)
	# railbind.optics/1 as root-run reads write it, and damaged.
	seed hourly '{"schema":"railbind.optics/1","modules":{"0000:05:00.0":[[1700000000,40.0],[1700003600,46.0],[1700007200,52.0]],"0000:15:00.0":[[1700000000,30]]}}'
	seed odd '{"schema":"railbind.optics/1","modules":{"0000:05:00.0":[[1699800000,20],[1700007200,52],["x",1],[1700007100,50],[1700099999,9],[1700000000,1e308],[1700000001,-1000.5],[1,2,3]]}}'
	seed full '{"schema":"railbind.optics/1","modules":{"0000:05:00.0":[[1700000001,1],[1700000002,2],[1700000003,3],[1700000004,4],[1700000005,5],[1700000006,6],[1700000007,7],[1700000008,8],[1700000009,9],[1700000010,10],[1700000011,11],[1700000012,12],[1700000013,13],[1700000014,14],[1700000015,15],[1700000016,16],[1700000017,17]]}}'
	seed other '{"schema":"railbind.counters/1","modules":{}}'
	seed bad '{"schema":"railbind.optics/1","modules":{"0000:05:00.0":{"a":1}}}'
	;;
dcb)
	# DCB replies, healthy, broken and errors (tests/dcb/mkdcb.c).
	"$FUZZ_BIN/mkdcb" -seeds "$dir"
	;;
nccllog)
	cp "$TOP"/fuzz/seeds/nccllog/* "$dir/"
	# Each NCCL version's forms and each nccl-tests table style, as the tests write them.
	for v in 2.18 2.21 2.30; do
		sh "$TOP/tests/nccllog/gen.sh" log $v node-0 | head -40 > "$dir/log-$v"
	done
	for s in new old iter nc; do
		sh "$TOP/tests/nccllog/gen.sh" table all_reduce_perf 2 22 1 $s > "$dir/table-$s"
	done
	;;
*)
	echo "seed.sh: unknown target $target" >&2
	exit 1
	;;
esac
