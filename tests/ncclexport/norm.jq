# The fields of railbind.topo/1 and railbind.plan/1 that an NCCL topology
# XML cannot hold, removed from both sides before they are compared:
#  - source: the file name, which is the export's on the re-import;
#  - host: NCCL's format names no host (host_hash is a hash of it);
#  - netdev: a <net> has one name, the RDMA device's (mlx5_0), so the
#    Ethernet interface of an RDMA NIC is not in the file;
#  - what a GPU's own library or driver said of it (uuid, minor, nvlinks, mig,
#    c2c, xgmi, partition; gpu_libraries and the warnings about them): a
#    <gpu> has none of it (the rank's RAILBIND_GPU_UUID goes with it);
#  - port_state: NCCL's nets are its ACTIVE ports, the file says no state;
#  - subnet: a <net> carries no GID (its IB subnet prefix);
#  - dra: Kubernetes' pcieRoot names a root bus from the sysfs path, and an
#    NCCL <cpu> keeps no bus number of its host bridge;
# and the one mapping NCCL makes itself: NODE (two root complexes of one
# NUMA node) is PHB in NCCL, which has no NODE class.
def path: if . == "NODE" then "PHB" else . end;
del(.source, .host)
| if .paths then .paths |= map(map(path)) else . end
| if .gpu_paths then .gpu_paths |= map(map(path)) else . end
| if .nic_paths then .nic_paths |= map(map(path)) else . end
| if .nics then .nics |= map(del(.netdev, .port_state, .subnet, .dra)) else . end
| if .gpus then .gpus |= map(del(.dra, .uuid, .minor, .nvlinks, .mig, .c2c, .xgmi, .partition)) else . end
| del(.gpu_libraries, .warnings[]? | select(.id == "gpu-library"))
| if .ranks then .ranks |= map(.nics |= map(del(.netdev) | .path |= path)
	| .nccl.nics |= map(del(.netdev))
	| del(.gpu.uuid, .gpu.mig, .env.RAILBIND_GPU_UUID, .env.RAILBIND_MIG_UUID)) else . end
