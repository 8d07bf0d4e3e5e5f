import type { ConnectOptions } from '../../protocol/client.js';
import type { Channel } from '../../transport/channel.js';
import type { SharedOptions } from '../../share/daemon/paths.js';
import type { ClusterMember } from '../../share/cluster/member.js';
import type { ServerEntry } from '../config/config.js';

/**
 * Where a slot's server runs. `local` (no placement): the slot spawns or connects it
 * itself. `daemon`: a stdio server runs in the user's pool daemon, one process per
 * fingerprint for the machine. `cluster`: a stdio server runs on the cluster member that
 * owns it (rendezvous hash of fingerprint and principal), this one or another.
 */
export interface Placement {
  readonly kind: 'daemon' | 'cluster';
  /**
   * The channel to a server that runs elsewhere; undefined when this placement leaves the
   * entry to the slot (remote servers; a sandboxed entry, which stays in its sandbox here).
   */
  open(server: string, entry: ServerEntry, options: ConnectOptions, signal: AbortSignal, principal?: string): Promise<Channel> | undefined;
}

/** Stdio servers through the pool daemon; its code loads on the first shared start. */
export function daemonPlacement(shared: SharedOptions): Placement {
  return {
    kind: 'daemon',
    open(server, entry, options, signal) {
      // The daemon runs what it is given as it is: a sandboxed entry stays in this pool, in its sandbox.
      if (entry.kind !== 'stdio' || entry.config.sandbox) return undefined;
      return import('../../share/daemon/open-shared.js').then(({ openShared }) => openShared(server, entry.config, options, shared, signal));
    },
  };
}

/** Stdio servers on their owner in the cluster; `member` joins the cluster on first need (and loads its code). */
export function clusterPlacement(member: () => Promise<ClusterMember>): Placement {
  return {
    kind: 'cluster',
    open(server, entry, options, signal, principal) {
      // A sandboxed entry runs where it is called, in its sandbox: its paths are this machine's.
      if (entry.kind !== 'stdio' || entry.config.sandbox) return undefined;
      return member().then((m) => m.open(server, entry.config, options, signal, principal));
    },
  };
}
