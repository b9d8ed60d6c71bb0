/** The password policy on a worker thread (src/cli/password-worker.ts), started as a command starts. */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { PasswordCheck } from '../users/password-policy.js';

/**
 * Runs `work` with the password policy on its own thread, started now so that zxcvbn's
 * dictionaries load meanwhile, and stopped when the work ends.
 */
export async function withPasswordThread<T>(work: (check: PasswordCheck) => Promise<T>): Promise<T> {
  const thread = startPasswordThread();
  try {
    return await work(thread.check);
  } finally {
    await thread.stop();
  }
}

function startPasswordThread(): { check: PasswordCheck; stop: () => Promise<void> } {
  const worker = new Worker(new URL('./password-worker.js', import.meta.url));
  // The thread failing or ending, whenever it happens, fails the check that waits or comes next
  // (and so the command); until a check asks, nothing waits for it.
  const ended = new Promise<never>((_, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the password check ended early (exit code ${code})`)));
  });
  ended.catch(() => undefined);
  const check: PasswordCheck = async (password, account) => {
    const answer = once(worker, 'message') as Promise<[string[]]>;
    worker.postMessage({ password, account });
    const [problems] = await Promise.race([answer, ended]);
    return problems;
  };
  return { check, stop: async () => void (await worker.terminate()) };
}
