/**
 * The password policy on its own thread (src/users/password-worker.ts), for the server and the
 * CLI alike. zxcvbn's matching is plain JavaScript that takes tens of milliseconds for a long
 * password; on the server's main thread each sign-up would stall every other request meanwhile,
 * and a client sending long passwords could stall them all. On this thread it waits only for
 * other password checks; the dictionaries load here too, while the rest starts.
 */
import { Worker } from 'node:worker_threads';
import { ProblemError } from '../kernel/problem.js';
import type { PasswordCheck } from './password-policy.js';

export type PasswordThread = {
  check: PasswordCheck;
  /** Settles when the dictionaries are loaded (rejects when they cannot be). */
  ready: Promise<void>;
  stop: () => Promise<void>;
};

/** Checks waiting for the thread at once, beyond which a check is refused (503, retry shortly). */
const MAX_WAITING = 16;

type Answer = { id: number; problems: string[] } | { id: number; error: string } | { ready: true };
type Waiting = { resolve: (problems: string[]) => void; reject: (err: Error) => void };
type WorkerFile = { url: URL; execArgv: string[] };
type Thread = {
  ready: Promise<void>;
  ask: PasswordCheck;
  waiting: () => number;
  ended: () => boolean;
  terminate: () => Promise<number>;
};

/**
 * From the built JavaScript (dist/), the worker beside this file; from the TypeScript sources
 * (the test suite), the same file through tsx, which maps its `.js` imports to the sources.
 */
function workerFile(): WorkerFile {
  const fromSources = import.meta.url.endsWith('.ts');
  return fromSources
    ? { url: new URL('./password-worker.ts', import.meta.url), execArgv: ['--import', 'tsx'] }
    : { url: new URL('./password-worker.js', import.meta.url), execArgv: [] };
}

/** A 503 for a check that was not done: nothing was changed, and a retry in a moment may pass. */
const notChecked = (why: string) =>
  new ProblemError(
    503,
    'unavailable',
    'Service unavailable',
    `${why}; nothing was changed. Retry in a few seconds.`,
    {},
    { 'Retry-After': '2' },
  );
const passwordChecksBusy = () => notChecked('Too many passwords are being checked right now');
const interrupted = () => notChecked('The password check was interrupted');

/** One worker thread and the checks waiting for its answers; `onEnd` hears why it ended. */
function spawn(file: WorkerFile, onEnd: (err: Error) => void): Thread {
  const worker = new Worker(file.url, { execArgv: file.execArgv });
  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  let ended = false;
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (answer: Answer) => {
      if ('ready' in answer) return resolve();
      const entry = waiting.get(answer.id);
      waiting.delete(answer.id);
      if ('error' in answer) entry?.reject(new Error(`the password check failed: ${answer.error}`));
      else entry?.resolve(answer.problems);
    });
    // An error is followed by the exit: what waits fails once, with the first reason.
    const end = (err: Error) => {
      if (ended) return;
      ended = true;
      reject(err);
      for (const entry of waiting.values()) entry.reject(interrupted());
      waiting.clear();
      onEnd(err);
    };
    worker.once('error', end);
    worker.once('exit', (code) => end(new Error(`the password check thread ended (exit code ${code})`)));
  });
  ready.catch(() => undefined);
  return {
    ready,
    ask: (password, account) =>
      new Promise<string[]>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, password, account });
      }),
    waiting: () => waiting.size,
    ended: () => ended,
    terminate: () => worker.terminate(),
  };
}

/**
 * Starts the thread. Checks are answered in turn; more than `maxWaiting` at once are refused with
 * a 503. Should the thread end before it is stopped (it should not), the checks waiting for it
 * get a 503, `onEnded` hears why, and the next check starts another. `worker` is another worker
 * file to run (tests).
 */
export function startPasswordThread(
  opts: { maxWaiting?: number; worker?: WorkerFile; onEnded?: (err: Error) => void } = {},
): PasswordThread {
  const { maxWaiting = MAX_WAITING, worker = workerFile(), onEnded } = opts;
  let stopped = false;
  const onEnd = (err: Error) => {
    if (!stopped) onEnded?.(err);
  };
  let thread = spawn(worker, onEnd);
  return {
    check: (password, account) => {
      if (stopped) return Promise.reject(new Error('the password check thread is stopped'));
      if (thread.ended()) thread = spawn(worker, onEnd);
      if (thread.waiting() >= maxWaiting) return Promise.reject(passwordChecksBusy());
      return thread.ask(password, account);
    },
    get ready() {
      return thread.ready;
    },
    stop: async () => {
      stopped = true;
      await thread.terminate();
    },
  };
}

/** Runs `work` with the password policy on its own thread, started now, and stopped when the work ends. */
export async function withPasswordThread<T>(work: (check: PasswordCheck) => Promise<T>): Promise<T> {
  const thread = startPasswordThread();
  try {
    return await work(thread.check);
  } finally {
    await thread.stop();
  }
}
