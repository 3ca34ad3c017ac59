// Sharing the machine's cores between the models of one process. Every embedded policy holds a
// lease while it is open; a session created later takes floor(cores / leases) intra-op threads, so
// N agents that run at the same time never oversubscribe the cores. Sessions are created lazily
// (at the first call), after every agent of a run has been built, so every lease is counted.
import * as os from 'node:os';

let leases = 0;

/** Number of cores this process may use. */
export function availableCores(): number {
  return Math.max(1, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
}

/** A claim on a share of the cores; release it when the model closes. */
export interface CoreLease {
  /** Threads a session of this holder should use now: floor(cores / open leases), at least 1. */
  threads(): number;
  release(): void;
}

/** Take a lease. */
export function leaseCores(): CoreLease {
  leases++;
  let open = true;
  return {
    threads: () => Math.max(1, Math.floor(availableCores() / Math.max(leases, 1))),
    release: () => {
      if (open) {
        open = false;
        leases--;
      }
    },
  };
}

/** Number of leases held now. */
export function openLeases(): number {
  return leases;
}
