/**
 * The password policy on a worker thread, for the CLI commands that set a password. zxcvbn's
 * dictionaries take the command's single thread a long moment to load and rank; started first,
 * this thread loads them on the other core while the command opens the database, and answers
 * each { password, account } message with passwordProblems' list.
 */
import { parentPort } from 'node:worker_threads';
import { loadPasswordChecker, passwordProblems } from '../users/password-policy.js';

const port = parentPort;
if (!port) throw new Error('password-worker.ts runs as a worker thread (src/cli/password-thread.ts)');
const loading = loadPasswordChecker();
port.on(
  'message',
  async ({ password, account }: { password: string; account: { username: string; email: string } }) => {
    await loading;
    port.postMessage(await passwordProblems(password, account));
  },
);
