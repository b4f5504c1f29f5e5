#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen.sh log|table ...: NCCL_DEBUG=INFO logs and nccl-tests output in the forms
# each version prints (NCCL's src/init.cc, src/transport/net.cc,
# src/transport/net_ib/init.cc, src/graph/topo.cc; nccl-tests' src/util.cu),
# for the 4-GPU, 4-NIC machine of tests/fixtures/audit-ok.topo: GPU i at bus
# 04, 14, 84, 94 with its own mlx5_i behind one PCIe switch.
#
#   gen.sh log VERSION HOST...    one process per GPU on each host; VERSION is
#                                 2.18 (busId in the channel brackets, no Init
#                                 START), 2.21 (srun --label prefixes) or 2.30
#                                 (torchrun prefixes, timestamps, connections
#                                 after Init COMPLETE, rail ids in "Using")
#   environment of "log": WRONG=HOST:GPU (that rank's channels go through
#   the next GPU's NIC), NOGDR=1 (no peer memory: no /GDRDMA, NCCL says GPU
#   Direct RDMA Disabled), MISSING=HOST:NIC (NCCL_IB_HCA leaves NIC out on
#   HOST; its GPU's rank falls back to the NIC before it), PXN=1 (one rank's
#   channels through another's NIC), IBHCA=SPEC (NCCL_IB_HCA on every host),
#   ALGO=NAME (NCCL_ALGO), MIXED=1 (rank 0 says the Net device counts differ)
#
#   gen.sh table NAME HOSTS BUSBW [WRONG] [STYLE]   an nccl-tests run across
#                                 HOSTS hosts (4 GPUs each), busbw BUSBW GB/s at
#                                 8 GiB, #wrong WRONG at 1 MiB; STYLE is new
#                                 (2.17+), old (before "root": "error"), iter
#                                 (per-iteration columns), or nc (-c 0: N/A)
set -eu

gpu_bus() { case $1 in 0) echo 04 ;; 1) echo 14 ;; 2) echo 84 ;; 3) echo 94 ;; esac; }

log() {
	ver=$1
	shift
	nhosts=$# nranks=$(($# * 4)) h=0
	for host in "$@"; do
		g=0
		while [ $g -lt 4 ]; do
			rank=$((h * 4 + g)) pid=$((1000 + rank)) tid=$((2000 + rank))
			bus=$(gpu_bus $g)
			busid=${bus}000
			dev=$g gdr=/GDRDMA pre= ts=
			[ "${WRONG:-}" = "$host:$g" ] && dev=$(((g + 1) % 4))
			[ "${NOGDR:-}" = 1 ] && gdr=
			[ "${PXN:-}" = 1 ] && [ $rank = 1 ] && pxn="(0)" || pxn=
			using="[0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB"
			hca=${IBHCA:-}
			case ${MISSING:-} in
			"$host":mlx5_*)
				miss=${MISSING#*:}
				n=${miss#mlx5_}
				using=$(echo "$using" | sed "s/ *\[$n\]$miss:1\/IB//")
				hca="^$miss"
				[ $g = "$n" ] && dev=$((n - 1)) ;;
			esac
			# The brackets: the bus id in hex in 2.18.1, the NVML index after.
			br() { if [ "$ver" = 2.18 ]; then printf '%s' "$busid"; else printf '%s' "$1"; fi; }
			case $ver in
			2.21) pre="$rank: " ;;
			2.30) pre="[rank$rank]:" ts="2026-12-03T07:00:0$g.123456Z " ;;
			esac
			p="$pre$ts$host:$pid:$tid [$g] NCCL INFO"
			[ "$ver" = 2.30 ] && using=$(echo "$using" | sed 's/:1\//:1:0\//g')
			echo "$p NCCL_SOCKET_IFNAME set by environment to ib"
			[ -n "$hca" ] && echo "$p NCCL_IB_HCA set to $hca"
			[ -n "${ALGO:-}" ] && echo "$p NCCL_ALGO set by environment to $ALGO"
			echo "$p NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."
			echo "$p NET/IB : Using $using [RO]; OOB ib0:10.0.$h.$g<0>"
			echo "$p Using network IB"
			case $ver in
			2.21) echo "$p ncclCommInitRank comm 0x55d0$rank rank $rank nranks $nranks cudaDev $g nvmlDev $g busId $busid commId 0xfeed - Init START" ;;
			2.30) echo "$p [Rank $rank] ncclCommInitRankConfig comm 0x55d0$rank rank $rank nranks $nranks cudaDev $g nvmlDev $g busId $busid commId 0xfeed - Init START" ;;
			esac
			if [ -z "$gdr" ]; then
				echo "$p NET/IB : GPU Direct RDMA Disabled for HCA $dev 'mlx5_$dev'"
			fi
			chan() {
				c=0
				while [ $c -lt 2 ]; do
					peer=$(((rank + 4) % nranks))
					echo "$p Channel 0$c/0 : $rank[$(br $g)] -> $peer[$(br $g)] [send] via NET/IB/$dev$pxn$gdr"
					echo "$p Channel 0$c/0 : $peer[$(br $g)] -> $rank[$(br $g)] [receive] via NET/IB/$dev$gdr"
					echo "$p Channel 0$c/0 : $rank[$(br $g)] -> $(((rank + 1) % nranks))[$(br $g)] via P2P/IPC/read"
					c=$((c + 1))
				done
			}
			[ "$ver" != 2.30 ] && chan
			case $ver in
			2.18) echo "$p comm 0x55d0$rank rank $rank nranks $nranks cudaDev $g busId $busid commId 0xfeed - Init COMPLETE" ;;
			2.21) echo "$p ncclCommInitRank comm 0x55d0$rank rank $rank nranks $nranks cudaDev $g nvmlDev $g busId $busid commId 0xfeed localSize 4 used 123 bytes - Init COMPLETE" ;;
			2.30) echo "$p ncclCommInitRankConfig comm 0x55d0$rank rank $rank nranks $nranks cudaDev $g nvmlDev $g busId $busid commId 0xfeed - Init COMPLETE"
			      if [ $rank = 0 ]; then
				      if [ "${MIXED:-}" = 1 ]; then
					      echo "$p Local Net device counts across ranks: min 3 max 4"
				      else
					      echo "$p Local Net device counts across ranks: min 4 max 4"
				      fi
			      fi
			      chan ;;
			esac
			g=$((g + 1))
		done
		h=$((h + 1))
	done
	: "$nhosts"
}

table() {
	name=$1 hosts=$2 busbw=$3 wrong=${4:-0} style=${5:-new}
	echo "# nccl-tests version 2.19.6 nccl-headers=23007 nccl-library=23007"
	[ "$style" = old ] || echo "# Collective test starting: $name"
	echo "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0"
	echo "#"
	echo "# Using devices"
	h=0
	while [ $h -lt "$hosts" ]; do
		g=0
		while [ $g -lt 4 ]; do
			printf '#  Rank %2d Group  0 Pid %6d on %10s device %2d [%04x:%s:00] NVIDIA H100 80GB HBM3\n' \
				$((h * 4 + g)) $((1000 + h * 4 + g)) node-$h $g 0 "$(gpu_bus $g)"
			g=$((g + 1))
		done
		h=$((h + 1))
	done
	echo "#"
	case $style in
	old)
		echo "#                                                       out-of-place                       in-place          "
		echo "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error"
		echo "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       " ;;
	iter)
		echo "#                                                              out-of-place (+ per-iteration)                                in-place (+ per-iteration)"
		echo "#       size         count      type   redop    root     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw #wrong    i_min    i_max    i_p99    i_cv% "
		echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)            (us)     (us)     (us)      (%) " ;;
	*)
		echo "#                                                              out-of-place                       in-place          "
		echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong "
		echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)        " ;;
	esac
	for size in 8 1048576 268435456 8589934592; do
		bw=$(awk -v s=$size -v b="$busbw" 'BEGIN { printf "%.2f", ((s >= 268435456) ? b * ((s > 268435456) ? 1 : 0.9) : 0.5) }')
		w=0
		[ $size = 1048576 ] && w=$wrong
		case $style in
		old) printf '%12s  %12s  %8s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n' \
			$size $((size / 4)) float sum 100.0 "$bw" "$bw" "${w}e+00" 99.0 "$bw" "$bw" 0e+00 ;;
		iter) printf '%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s\n' \
			$size $((size / 4)) float sum -1 100.0 "$bw" "$bw" "$w" 90.0 120.0 119.0 2.5 99.0 "$bw" "$bw" 0 90.0 120.0 119.0 2.5 ;;
		nc) printf '%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n' \
			$size $((size / 4)) float sum -1 100.0 "$bw" "$bw" N/A 99.0 "$bw" "$bw" N/A ;;
		*) printf '%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n' \
			$size $((size / 4)) float sum -1 100.0 "$bw" "$bw" "$w" 99.0 "$bw" "$bw" 0 ;;
		esac
	done
	oob=0 ok=OK
	[ "$wrong" != 0 ] && oob=$wrong ok=FAILED
	[ "$style" = nc ] && oob=0 ok=OK
	printf '# %-20s : %d %s\n' "Out of bounds values" $oob $ok
	printf '# %-20s : %s \n' "Avg bus bandwidth" "$busbw"
	echo "#"
	[ "$style" = old ] || echo "# Collective test concluded: $name"
}

what=$1
shift
"$what" "$@"
