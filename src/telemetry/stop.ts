/**
 * How a process that started OpenTelemetry (./sdk.ts) sends what it still holds before it exits:
 * the server's and the worker's shutdown call stopTelemetry last. Nothing started, nothing to do.
 */
let stop: (() => Promise<void>) | undefined;
let started: Started | undefined;

type Started = {
  traces: boolean;
  /** With Prometheus's exposition: whether its port could be listened on (false when it could not). */
  metricsListening?: Promise<boolean>;
};

export function onTelemetryStop(fn: () => Promise<void>, what: Started): void {
  stop = fn;
  started = what;
}

/** Whether the SDK was started in this process (src/instrument.ts, loaded with `--import`), and whether it traces. */
export const telemetryStarted = (): Started | undefined => started;

/** Flushes and ends the SDK (5 s at most: an exporter that does not answer does not hold the exit). */
export async function stopTelemetry(): Promise<void> {
  if (!stop) return;
  await Promise.race([stop().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
}
