/**
 * What the budgets (src/http/rate-limit.ts, counted by src/budgets/counters.ts) hand an adapter
 * that answers requests of its own, the MCP endpoint: each as a function of the request, so that
 * the adapter needs neither the pipeline nor the counters to spend from them.
 */
import type { Request } from 'express';
import type { ProblemError } from '../../kernel/problem.js';

/** Whether this connection-opening notification may still be free for its key: spends one of its free openings. */
export type FreeOpening = (req: Request) => Promise<boolean>;

/**
 * Counts a refused authentication of the request's address, and turns the refusal into a 429 once
 * the address is over its budget.
 */
export type FailedAuth = (req: Request, refusal: ProblemError) => Promise<ProblemError>;
