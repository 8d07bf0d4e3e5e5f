/** How much of everything one bench run does. */
export interface Plan {
  mode: 'full' | 'quick';
  /** Runs per variant of the warm figures (1–3). */
  warmRounds: number;
  sequentialCalls: number;
  inflightCalls: number;
  inflight: number;
  bigBytes: number;
  /** Round trips per run of figure 3; the run's value is their median. */
  bigTrips: number;
  coldRounds: number;
  scaleServers: number;
  scaleRounds: number;
  /** Runs of the SDK connecting every one of `scaleServers` in turn (slow: they add up). */
  sdkScaleRounds: number;
  slowServers: number;
  slowInitMs: number;
  listRounds: number;
  shutdownServers: number;
  shutdownRounds: number;
  stubbornRounds: number;
  /** The SDK's close of a stubborn server takes ~4 s; run it this many times. */
  sdkStubbornRounds: number;
  memoryCalls: number;
  memoryBatch: number;
  memoryRounds: number;
}

export const FULL: Plan = {
  mode: 'full',
  warmRounds: 7,
  sequentialCalls: 2000,
  inflightCalls: 10_000,
  inflight: 64,
  bigBytes: 5 * 1024 * 1024,
  bigTrips: 5,
  coldRounds: 15,
  scaleServers: 100,
  scaleRounds: 7,
  sdkScaleRounds: 2,
  slowServers: 20,
  slowInitMs: 300,
  listRounds: 7,
  shutdownServers: 20,
  shutdownRounds: 7,
  stubbornRounds: 5,
  sdkStubbornRounds: 5,
  memoryCalls: 100_000,
  memoryBatch: 64,
  memoryRounds: 5,
};

/** A smoke run of seconds: every figure, every variant path, tiny counts. */
export const QUICK: Plan = {
  mode: 'quick',
  warmRounds: 1,
  sequentialCalls: 100,
  inflightCalls: 500,
  inflight: 64,
  bigBytes: 5 * 1024 * 1024,
  bigTrips: 1,
  coldRounds: 1,
  scaleServers: 10,
  scaleRounds: 1,
  sdkScaleRounds: 1,
  slowServers: 4,
  slowInitMs: 300,
  listRounds: 1,
  shutdownServers: 4,
  shutdownRounds: 1,
  stubbornRounds: 1,
  sdkStubbornRounds: 0,
  memoryCalls: 2000,
  memoryBatch: 64,
  memoryRounds: 1,
};
