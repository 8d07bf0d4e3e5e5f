/** How much of everything one bench run does. */
export interface Plan {
  mode: 'full' | 'quick';
  /** Runs per client of the throughput and 5 MiB figures. */
  rounds: number;
  /** Calls of the warm-up before figure 1's runs. */
  inflightCalls: number;
  /** Length of one run of figure 1. */
  inflightSeconds: number;
  inflight: number;
  /** Sequential latency: blocks per client, calls per block (the clients alternate block by block). */
  latencyBlocks: number;
  blockCalls: number;
  bigBytes: number;
  bigRounds: number;
  /** Round trips per run of the 5 MiB figure; the run's value is their median. */
  bigTrips: number;
  coldRounds: number;
  /** Servers configured for the construction figure. */
  configuredServers: number;
  constructRounds: number;
  /** Servers listed from a warm manifest cache by a fresh manager. */
  cachedServers: number;
  cachedRounds: number;
  /** Idle servers configured to weigh one (bytes of host heap each). */
  idleServers: number;
  /** Live connections opened to weigh one. */
  liveServers: number;
  memoryRounds: number;
  /** Rounds of the start-up figure (each a fresh process of every variant). */
  startupRounds: number;
  /** Figure 11: serve sessions sharing one config; alternating rounds; sequential calls per round (×4 for throughput). */
  daemonClients: number;
  daemonRounds: number;
  daemonCalls: number;
  /** Figures 12 and 13 (the gateway, issue 34): alternating rounds of every target; one run's seconds at 64 in flight; the warm-up's seconds. */
  gatewayRounds: number;
  gatewaySeconds: number;
  gatewayWarmSeconds: number;
  /** Sequential calls per block, and the block's bound in seconds (the peers answer tens of calls/s here). */
  gatewayBlockCalls: number;
  gatewayBlockSeconds: number;
  /** Live backends to weigh one in the gateway's RSS; rounds of that. */
  gatewayBackends: number;
  gatewayMemoryRounds: number;
  /** Servers configured for `tools/list` from a warm cache through the gateway; fresh gateways listing. */
  gatewayListServers: number;
  gatewayListRounds: number;
  /** Figure 14 (cluster): servers each gateway calls; alternating rounds and sequential calls per round (×4 in flight); owner deaths measured each way. */
  clusterServers: number;
  clusterRounds: number;
  clusterCalls: number;
  clusterDeaths: number;
}

export const FULL: Plan = {
  mode: 'full',
  rounds: 15,
  inflightCalls: 4_000,
  inflightSeconds: 0.3,
  inflight: 64,
  latencyBlocks: 30,
  blockCalls: 200,
  bigBytes: 5 * 1024 * 1024,
  bigRounds: 7,
  bigTrips: 2,
  coldRounds: 11,
  configuredServers: 200,
  constructRounds: 9,
  cachedServers: 50,
  cachedRounds: 9,
  idleServers: 2000,
  liveServers: 10,
  memoryRounds: 3,
  startupRounds: 15,
  daemonClients: 10,
  daemonRounds: 5,
  daemonCalls: 400,
  gatewayRounds: 5,
  gatewaySeconds: 0.3,
  gatewayWarmSeconds: 0.4,
  gatewayBlockCalls: 200,
  gatewayBlockSeconds: 0.3,
  gatewayBackends: 10,
  gatewayMemoryRounds: 1,
  gatewayListServers: 20,
  gatewayListRounds: 5,
  clusterServers: 10,
  clusterRounds: 6,
  clusterCalls: 400,
  clusterDeaths: 3,
};

/** A smoke run of seconds: every figure, every client path, tiny counts. */
export const QUICK: Plan = {
  mode: 'quick',
  rounds: 1,
  inflightCalls: 500,
  inflightSeconds: 0.05,
  inflight: 64,
  latencyBlocks: 2,
  blockCalls: 50,
  bigBytes: 5 * 1024 * 1024,
  bigRounds: 1,
  bigTrips: 1,
  coldRounds: 1,
  configuredServers: 200,
  constructRounds: 1,
  cachedServers: 4,
  cachedRounds: 1,
  idleServers: 200,
  liveServers: 2,
  memoryRounds: 1,
  startupRounds: 1,
  daemonClients: 2,
  daemonRounds: 1,
  daemonCalls: 20,
  gatewayRounds: 1,
  gatewaySeconds: 0.05,
  gatewayWarmSeconds: 0.05,
  gatewayBlockCalls: 20,
  gatewayBlockSeconds: 0.1,
  gatewayBackends: 2,
  gatewayMemoryRounds: 1,
  gatewayListServers: 4,
  gatewayListRounds: 1,
  clusterServers: 3,
  clusterRounds: 2,
  clusterCalls: 40,
  clusterDeaths: 1,
};
