"""What the Slurm tests share: free ports and an environment for a private scripts/slurm-local
cluster."""
import os
import random
import socket


def free_port_pair():
    """Two consecutive free TCP ports (the controller's and the node daemon's), so that neither
    a cluster started by hand (scripts/slurm-local's default 16817) nor another run of a test
    on the machine is disturbed."""
    for base in random.sample(range(20000, 30000, 2), 50):
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("0.0.0.0", base))
                b.bind(("0.0.0.0", base + 1))
            return base
        except OSError:
            continue
    raise RuntimeError("no two consecutive free TCP ports in 20000-30000")


def cluster_env(slurm_dir):
    """os.environ for a cluster in slurm_dir on free ports, SLURM_CONF naming its slurm.conf;
    Slurm's own variables from an enclosing job, which would redirect the commands, removed."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
    env.update(VIADUCT_SLURM_DIR=slurm_dir, VIADUCT_SLURM_PORT=str(free_port_pair()),
               SLURM_CONF=f"{slurm_dir}/etc/slurm.conf")
    return env
