/** The node options the server runs with (bin/server-options.mjs). */
export function serverNodeOptions(env?: Record<string, string | undefined>): string[];
