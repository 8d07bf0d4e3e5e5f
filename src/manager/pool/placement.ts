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
 * A cluster placement plugs in here too: given the entry (and later the principal), it
 * returns a factory whose channels reach the member that owns the server.
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
