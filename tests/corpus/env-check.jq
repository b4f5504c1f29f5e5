# SPDX-License-Identifier: GPL-2.0-or-later
# The environment a plan gives its ranks, judged as NCCL reads it. Input: a
# railbind.plan/1 document; $topo[0]: railbind topo --json of the same file.
# Prints one line per fault, nothing when the plan is right.

# NCCL_IB_HCA as NCCL parses it (src/misc/utils.cc parseStringList and
# matchIfList, src/transport/net_ib/init.cc): a leading '^' excludes, then
# '=' matches names exactly, else as prefixes; entries split at ',', an
# empty one skipped; "dev:port", no port or an empty one any port; the
# first 32 (MAX_IB_DEVS) read.
def hca_rule($list):
  ($list | startswith("^")) as $not
  | ($list | ltrimstr("^")) as $l
  | ($l | startswith("=")) as $exact
  | [($l | ltrimstr("=")) | split(",")[] | select(length > 0) | split(":")
     | select(.[0] != "")
     | {prefix: .[0],
        port: ((.[1] // "") | if . == "" then -1 else (try tonumber catch 0) end)}]
  | {not: $not, exact: $exact, ifs: .[0:32]};
def selects($rule; $name; $port):
  (if ($rule.ifs | length) == 0 then true
   else any($rule.ifs[];
            (if $rule.exact then $name == .prefix else $name | startswith(.prefix) end)
            and (.port == -1 or $port == -1 or .port == $port))
   end) as $m
  | if $rule.not then ($m | not) else $m end;
# "mlx5_1:1" -> {name, port}; the port -1 when not said.
def dev: split(":") | {name: .[0], port: ((.[1] // "-1") | tonumber)};
# Names as Linux's RDMA drivers name verbs devices, never an interface's.
def verbs_like: test("^(mlx[45]_|bnxt_re|irdma|efa_|hfi1_|qedr|rdma|erdma_|mana_|ionic_|hns_|rxe|siw)");

[.ranks[].env.NCCL_IB_HCA] as $hcas
| ($hcas[0] // null) as $hca
| [$topo[0].nics[] | select(.rdma) | .name, (.hca // "" | dev.name)] as $rdma_names
| (if ($hcas | unique | length) > 1
   then "NCCL_IB_HCA differs between ranks: \($hcas | unique)" else empty end),
  (if $hca == null then empty
   else
     ([$hca | ltrimstr("=") | split(",")[]]) as $entries
     | ([.ranks[].nics[] | .hca // empty] | unique) as $planned
     | (if ($hca | startswith("=") | not) then "NCCL_IB_HCA \($hca) has no leading '='" else empty end),
       (if ($hca | test("_dma(:|,|$)")) then "NCCL_IB_HCA \($hca) names a Data Direct _dma device" else empty end),
       (if ($entries | length) > 32 then "NCCL_IB_HCA has \($entries | length) entries, NCCL reads 32" else empty end),
       (if ($planned | length) <= 32 and ($entries | sort) != $planned
        then "NCCL_IB_HCA \($entries) is not the plan's rail ports \($planned)" else empty end),
       (hca_rule($hca) as $rule
        | [$topo[0].nics[] | select(.rdma and .hca != null and .excluded != "port-down")
           | select(.hca | dev as $d | selects($rule; $d.name; $d.port)) | .hca] as $sel
        | .ranks[] | select(.nics | length > 0) | select(.nics[0].hca != null)
        | .gpu.pci as $g
        | (.nics[] | select(.hca != null) | select([.hca] | inside($sel) | not)
           | "GPU \($g): NCCL_IB_HCA does not select its rail \(.hca)"),
          ([.nccl.nics[] | .hca // empty | select([.] | inside($sel))] as $n
           | if ($n | length) > 0 then
               (if ([.nics[0].hca] | inside($n)) then empty
                else "GPU \($g): NCCL would pick \($n) from NCCL_IB_HCA, not the planned \(.nics[0].hca)" end)
             elif .nccl.note == null then
               "GPU \($g): NCCL's own choice \([.nccl.nics[] | .name]) is not in NCCL_IB_HCA and no note says why"
             else empty end))
   end),
  (.ranks[].env.NCCL_SOCKET_IFNAME // empty
   | ltrimstr("=") | split(",")[]
   | select(. as $n | ($rdma_names | index([$n])) or ($n | verbs_like))
   | "NCCL_SOCKET_IFNAME names the RDMA device \(.)")
