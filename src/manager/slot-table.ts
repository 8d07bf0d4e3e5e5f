import { DEFAULT_SHUTDOWN_GRACE_MS } from '../transport/channel.js';
import type { ConnectOptions } from '../protocol/client.js';
import type { ResolvedServer, ServerEntry } from './config/config.js';
import { diffEntries, type ReloadReport } from './config/config-diff.js';
import { type ToolPredicate, toolPredicate } from './catalog/tool-filter.js';
import { ServerSlot } from './pool/server-slot.js';
import { assertOpen } from './scope/pool-state.js';
import { MetricsRecorder } from './telemetry/metrics.js';
import { slotHost, type SlotWiring } from './slot-wiring.js';
import { InstancedSlot } from './principals/instanced-slot.js';
import { instanceSlotHost, isInstanced } from './principals/instance-host.js';

/**
 * The pool's slots by server name across reloads: one made per entry, replaced by diff
 * when the config changes, the replaced ones drained (their calls in flight finish) before
 * a successor of the same name starts. Also each server's figures, which outlive a change.
 */
export class SlotTable {
  /** The configured servers by name; a reload replaces entries. */
  readonly slots = new Map<string, ServerSlot>();
  /** Per server name; a changed server keeps its figures across a reload, a removed one loses them. */
  private readonly recorders = new Map<string, MetricsRecorder>();
  /** Slots a reload took out of the pool that still finish their calls in flight. */
  private readonly retiring = new Set<ServerSlot>();
  /** Per server name, the drain of its last retired slot while it lasts: the next slot of that name starts after it. */
  private readonly drains = new Map<string, Promise<void>>();
  private wiring!: SlotWiring;

  /** The first config's slots, once the wiring they report to exists. */
  fill(wiring: SlotWiring, entries: readonly ServerEntry[]): void {
    this.wiring = wiring;
    for (const entry of entries) this.slots.set(entry.name, this.newSlot(entry));
  }

  /** Starts the servers whose entries say `eager`, in the background. */
  startEager(slots: readonly ServerSlot[] = [...this.slots.values()]): void {
    for (const slot of slots) {
      if ((slot.entry.kind === 'stdio' || slot.entry.kind === 'http') && slot.entry.config.startup === 'eager') slot.ready().catch(() => undefined);
    }
  }

  recorder(server: string): MetricsRecorder {
    let recorder = this.recorders.get(server);
    if (!recorder) this.recorders.set(server, (recorder = new MetricsRecorder()));
    return recorder;
  }

  /** One reload's work, done at once so no call sees half of it. */
  apply(entries: ServerEntry[]): ReloadReport {
    const { pool, catalog, options } = this.wiring;
    assertOpen(pool);
    const report = diffEntries(new Map([...this.slots].map(([name, slot]) => [name, slot.entry])), entries);
    const before = new Map(this.slots);
    const grace = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const retired: ServerSlot[] = [];
    for (const name of [...report.removed, ...report.changed]) {
      const old = before.get(name) as ServerSlot;
      retired.push(old);
      this.retiring.add(old);
      const drain: Promise<void> = old.drain(grace).finally(() => {
        this.retiring.delete(old);
        if (this.drains.get(name) === drain) this.drains.delete(name);
      });
      this.drains.set(name, drain);
    }
    for (const name of report.removed) this.recorders.delete(name);
    const added: ServerSlot[] = [];
    const unchanged = new Set(report.unchanged);
    this.slots.clear();
    for (const entry of entries) {
      const kept = unchanged.has(entry.name) ? before.get(entry.name) : undefined;
      // A server removed earlier and added back may still be draining: its slot follows that drain too.
      const slot = kept ?? this.newSlot(entry, this.drains.get(entry.name));
      if (!kept) added.push(slot);
      this.slots.set(entry.name, slot);
    }
    const hadTools = retired.filter((slot) => catalog.index.toolsOf(slot.name) !== undefined).map((slot) => slot.name);
    const hadPrompts = retired.filter((slot) => catalog.prompts.promptsOf(slot.name) !== undefined).map((slot) => slot.name);
    const renamed = catalog.reconfigure([...this.slots.keys()], filtersOf(entries), retired);
    hadTools.push(...renamed.tools);
    hadPrompts.push(...renamed.prompts);
    for (const name of report.removed) pool.search.update(name, undefined);
    for (const name of report.changed) {
      const from = (before.get(name) as ServerSlot).state;
      const to = (this.slots.get(name) as ServerSlot).state;
      if (from !== to) this.wiring.emit('stateChange', { server: name, from, to });
    }
    for (const server of hadTools) this.wiring.emit('toolsChanged', { server });
    for (const server of hadPrompts) this.wiring.emit('promptsChanged', { server });
    this.wiring.emit('configChanged', report);
    this.startEager(added);
    return report;
  }

  /** The stdio servers, with the options each connects with (a cluster member's owners start them). */
  stdioServers(): { name: string; config: ResolvedServer; options: ConnectOptions }[] {
    return [...this.slots.values()].flatMap((slot) =>
      slot.entry.kind === 'stdio' ? [{ name: slot.name, config: slot.entry.config, options: slotHost(this.wiring, slot.entry, () => true, this.recorder(slot.name)).connectOptions(slot.name) }] : [],
    );
  }

  /** Stops every slot, the retiring ones too, in parallel within `grace` ms; never rejects. */
  async stop(grace: number): Promise<void> {
    const slots = [...this.slots.values(), ...this.retiring];
    await Promise.all(slots.map((slot) => slot.stop('closed', grace).catch(() => undefined)));
  }

  /** A slot for `entry` that reports its state to the manager only while it is the pool's slot for that server. */
  private newSlot(entry: ServerEntry, predecessor?: Promise<void>): ServerSlot {
    const { wiring } = this;
    let slot: ServerSlot | undefined;
    const current = () => slot !== undefined && this.slots.get(entry.name) === slot;
    const host = slotHost(wiring, entry, current, this.recorder(entry.name), predecessor);
    slot = isInstanced(entry)
      ? new InstancedSlot(entry as Extract<ServerEntry, { kind: 'stdio' | 'http' }>, host, {
          make: (instance, redact, principal, values) =>
            new ServerSlot(
              instance,
              instanceSlotHost(
                slotHost(wiring, instance, current, this.recorder(entry.name), undefined, { template: entry, values, ...(principal === undefined ? {} : { principal }) }),
                redact,
                instance.kind === 'http' ? () => wiring.auth.providerFor(entry.name, instance.config, principal) : undefined,
              ),
            ),
          credentials: wiring.options.credentials,
          graceMs: wiring.options.shutdownGraceMs,
          authorizationUrl: (config, principal) => wiring.auth.authorizationUrl(entry.name, config, principal),
        })
      : new ServerSlot(entry, host);
    return slot;
  }
}

/** Each server's own tool filter (its entry's `tools`), by name. */
export function filtersOf(entries: readonly ServerEntry[]): Map<string, ToolPredicate | undefined> {
  return new Map(entries.map((e) => [e.name, toolPredicate('config' in e ? e.config.tools : undefined)] as const));
}
