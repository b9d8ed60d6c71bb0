/** What code outside the HTTP layer may log through: src/http/log.ts builds it (pino), tests pass a silent one. */
export type Logger = {
  info: (msg: string, fields?: Record<string, unknown>) => void;
  error: (msg: string, fields?: Record<string, unknown>) => void;
};
