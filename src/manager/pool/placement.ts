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
  /** `instance`: the entry is one instance of a server run per principal or per session (see {@link PlacedInstance}). */
  channelsFor(entry: ServerEntry, instance?: PlacedInstance): ChannelFactory;
}

/** One instance of a server run per principal (or per session, without `principal`). */
export interface PlacedInstance {
  /** The server's entry as configured, its `${principal:…}` placeholders unfilled: what members know it by. */
  template: ServerEntry;
  /** Whom it runs for; undefined for an instance per session, which stays with its session's member. */
  principal?: string;
  /** The credentials filled into the instance's entry. */
  values: Record<string, string>;
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

/**
 * Stdio servers on their owner in the cluster; `member` joins the cluster on first need (and
 * loads its code). A per-principal instance is owned by the member with the highest hash of
 * (the template's fingerprint, the principal, member id), which starts it with the
 * principal's credentials, carried sealed; a per-session instance stays with its session.
 */
export function clusterPlacement(member: () => Promise<ClusterMember>): Placement {
  const cluster: ChannelFactory = {
    async open(entry, { options, signal }) {
      if (entry.kind !== 'stdio') return localChannels.open(entry, { options, signal });
      return (await member()).open(entry.name, entry.config, options, signal);
    },
  };
  const instanceOf = (instance: PlacedInstance & { principal: string }): ChannelFactory => ({
    async open(entry, { options, signal }) {
      const template = instance.template;
      if (template.kind !== 'stdio') return localChannels.open(entry, { options, signal });
      return (await member()).open(entry.name, template.config, options, signal, { principal: instance.principal, values: instance.values });
    },
  });
  return {
    // A sandboxed entry runs where it is called, in its sandbox: its paths are this machine's.
    channelsFor: (entry, instance) => {
      if (entry.kind !== 'stdio' || entry.config.sandbox) return localChannels;
      if (!instance) return cluster;
      return instance.principal === undefined ? localChannels : instanceOf(instance as PlacedInstance & { principal: string });
    },
  };
}
