import type { ClusterMember } from '../../share/cluster/member.js';
import type { SharedOptions } from '../../share/daemon/paths.js';
import type { ServerEntry } from '../config/config.js';
import { type ChannelFactory, localChannels } from './channel-factory.js';

/**
 * Where a server runs, decided once per slot (per entry, so a reload may move it): the
 * factory its starts open channels with. The slot's state machine is the same whatever
 * the placement says.
 *
 * - `localPlacement`: every server in this process (children, sandboxes, HTTP).
 * - `daemonPlacement`: plain stdio servers in the machine's pool daemon, shared with the
 *   other processes that run the same entry; sandboxed and remote ones stay local.
 *
 * - `clusterPlacement`: plain stdio servers on the cluster member that owns them
 *   (rendezvous hash of fingerprint and principal), this one or another.
 */
export interface Placement {
  channelsFor(entry: ServerEntry): ChannelFactory;
}

export const localPlacement: Placement = { channelsFor: () => localChannels };

/** With `shared`: a stdio server's channel goes through the pool daemon; its code loads on the first shared start. */
export function daemonPlacement(shared: SharedOptions): Placement {
  const daemon: ChannelFactory = {
    async open(entry, { options, signal }) {
      if (entry.kind !== 'stdio') return localChannels.open(entry, { options, signal });
      const { openShared } = await import('../../share/daemon/open-shared.js');
      return openShared(entry.name, entry.config, options, shared, signal);
    },
  };
  // The daemon runs what it is given as it is: a sandboxed entry stays in this pool, in its sandbox.
  return { channelsFor: (entry) => (entry.kind === 'stdio' && !entry.config.sandbox ? daemon : localChannels) };
}

/** The manager's placement for its `shared` option: `true` or an object, the daemon with those options; else local. */
export function placementFor(shared: boolean | SharedOptions | undefined): Placement {
  if (!shared) return localPlacement;
  return daemonPlacement(shared === true ? {} : shared);
}

/** Stdio servers on their owner in the cluster; `member` joins the cluster on first need (and loads its code). */
export function clusterPlacement(member: () => Promise<ClusterMember>): Placement {
  const cluster: ChannelFactory = {
    async open(entry, { options, signal }) {
      if (entry.kind !== 'stdio') return localChannels.open(entry, { options, signal });
      return (await member()).open(entry.name, entry.config, options, signal);
    },
  };
  // A sandboxed entry runs where it is called, in its sandbox: its paths are this machine's.
  return { channelsFor: (entry) => (entry.kind === 'stdio' && !entry.config.sandbox ? cluster : localChannels) };
}
