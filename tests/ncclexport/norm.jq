# The fields of railbind.topo/1 and railbind.plan/1 that an NCCL topology
# XML cannot hold, removed from both sides before they are compared:
#  - source: the file name, which is the export's on the re-import;
#  - host: NCCL's format names no host (host_hash is a hash of it);
#  - netdev: a <net> has one name, the RDMA device's (mlx5_0), so the
#    Ethernet interface of an RDMA NIC is not in the file;
# and the one mapping NCCL makes itself: NODE (two root complexes of one
# NUMA node) is PHB in NCCL, which has no NODE class.
def path: if . == "NODE" then "PHB" else . end;
del(.source, .host)
| if .paths then .paths |= map(map(path)) else . end
| if .nics then .nics |= map(del(.netdev)) else . end
| if .ranks then .ranks |= map(.nics |= map(del(.netdev) | .path |= path)) else . end
