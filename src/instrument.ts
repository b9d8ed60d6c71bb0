/**
 * Loaded before the server or the worker (`node --import`, bin/server-options.mjs): starts
 * OpenTelemetry when the settings ask for it (src/config.ts, telemetrySettings), so that its
 * instrumentations are in place before http, pg and redis load. When they ask for nothing, it
 * loads nothing else: tracing that is off costs nothing.
 */
import { telemetrySettings } from './config.js';

const settings = telemetrySettings();
if (settings) {
  const { startTelemetry } = await import('./telemetry/sdk.js');
  startTelemetry(settings);
}
